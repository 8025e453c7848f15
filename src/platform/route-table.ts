/** Which methods a path allows, from the app's own route list (Elysia answers a wrong method with 404). */
const patterns = new WeakMap<object, { method: string; regex: RegExp }[]>()

export function allowedMethods(routes: readonly { method: string; path: string }[], path: string): string[] {
  let table = patterns.get(routes)
  if (!table || table.length !== routes.length) {
    table = routes.map((route) => ({
      method: route.method,
      regex: new RegExp(`^${route.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+')}/?$`),
    }))
    patterns.set(routes, table)
  }
  return [...new Set(table.filter((entry) => entry.regex.test(path)).map((entry) => entry.method))].sort()
}
