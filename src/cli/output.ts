/** Admin command output: exactly one JSON object with --json, readable lines otherwise. */
export interface Output {
  result(json: Record<string, unknown>, human: string): void
}

export function createOutput(json: boolean, write: (text: string) => void = (text) => process.stdout.write(text)): Output {
  return {
    result(value, human) {
      write(json ? `${JSON.stringify(value)}\n` : `${human}\n`)
    },
  }
}
