// Transitional: the feed's storage moved to src/db/tenant/change-log.ts (what other modules
// need of it) and its cursors to ./cursor.ts. server.ts and categories/service.ts, being edited
// for another change, still import from here; test/architecture/layers.test.ts lists them and
// says when this file can go.
export { purgeTombstones, recordCategoryChanges } from '../../db/tenant/change-log.ts'
