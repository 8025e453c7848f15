// Transitional: ids moved to the db layer (src/db/ids.ts), which registry.ts needs and must
// not import from above. These files still import this path, being edited for another change:
// src/db/tenant/registry.ts, src/platform/auth.ts, src/cli/admin.ts and the accounts, categories
// and payees services. test/architecture/layers.test.ts lists them and says when this file can go.
export { ID_PREFIXES, type IdPrefix, isId, newId } from '../db/ids.ts'
