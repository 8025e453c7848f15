/** The limits of an import (CONTRACT §24), in one place for the parsers, the route and the docs. */

/** The file itself: the body of the raw form. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024
/** The JSON form carries the file as text or base64 (4/3 of its size) beside the options. */
export const MAX_JSON_BODY_BYTES = 6 * 1024 * 1024
/** pfin's externalId limit (CONTRACT §3). */
export const MAX_EXTERNAL_ID = 200
/** Rows (transactions) one import takes. */
export const MAX_IMPORT_ROWS = 5000
