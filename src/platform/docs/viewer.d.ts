// The viewer's files, imported `with { type: 'file' }`: Bun gives their path (in node_modules when run
// from source, inside the executable after `bun build --compile`, which embeds them).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
