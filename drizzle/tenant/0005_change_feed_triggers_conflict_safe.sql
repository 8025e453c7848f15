-- The feed's triggers again, without INSERT OR REPLACE: SQLite lets the statement that fires a
-- trigger override the trigger's own conflict policy, so an UPSERT (ON CONFLICT DO UPDATE) on a
-- resource table failed on change_log's unique index, and an UPDATE OR IGNORE skipped the feed.
-- Each trigger now deletes the entity's row and inserts the new one: no conflict to resolve.
DROP TRIGGER change_log_account_insert
--> statement-breakpoint
DROP TRIGGER change_log_account_update
--> statement-breakpoint
DROP TRIGGER change_log_category_insert
--> statement-breakpoint
DROP TRIGGER change_log_category_update
--> statement-breakpoint
DROP TRIGGER change_log_payee_insert
--> statement-breakpoint
DROP TRIGGER change_log_payee_update
--> statement-breakpoint
DROP TRIGGER change_log_transaction_insert
--> statement-breakpoint
DROP TRIGGER change_log_transaction_update
--> statement-breakpoint
DROP TRIGGER change_log_transaction_delete
--> statement-breakpoint
DROP TRIGGER change_log_category_type
--> statement-breakpoint
CREATE TRIGGER change_log_account_insert AFTER INSERT ON accounts
BEGIN
  DELETE FROM change_log WHERE resource = 'account' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('account', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_account_update AFTER UPDATE ON accounts
WHEN (OLD.external_id, OLD.name, OLD.type, OLD.subtype, OLD.provider_slug, OLD.secondary_provider_slug, OLD.balance, OLD.currency, OLD.color, OLD.icon, OLD.linked_account_id, OLD.is_archived, OLD.is_liability, OLD.is_favourite, OLD.show_in_dashboard, OLD.is_hidden, OLD.notes, OLD.sort_order, OLD.account_number, OLD.custom_fields, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.type, NEW.subtype, NEW.provider_slug, NEW.secondary_provider_slug, NEW.balance, NEW.currency, NEW.color, NEW.icon, NEW.linked_account_id, NEW.is_archived, NEW.is_liability, NEW.is_favourite, NEW.show_in_dashboard, NEW.is_hidden, NEW.notes, NEW.sort_order, NEW.account_number, NEW.custom_fields, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'account' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('account', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_category_insert AFTER INSERT ON categories
WHEN NEW.is_system = 0
BEGIN
  DELETE FROM change_log WHERE resource = 'category' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('category', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_category_update AFTER UPDATE ON categories
WHEN (OLD.external_id, OLD.name, OLD.icon, OLD.color, OLD.type, OLD.parent_id, OLD.preset_key, OLD.is_archived, OLD.is_system, OLD.countries, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.icon, NEW.color, NEW.type, NEW.parent_id, NEW.preset_key, NEW.is_archived, NEW.is_system, NEW.countries, NEW.created_at) AND NEW.is_system = 0
BEGIN
  DELETE FROM change_log WHERE resource = 'category' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('category', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_payee_insert AFTER INSERT ON payees
BEGIN
  DELETE FROM change_log WHERE resource = 'payee' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('payee', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_payee_update AFTER UPDATE ON payees
WHEN (OLD.external_id, OLD.name, OLD.normalized_name, OLD.aliases, OLD.search_text, OLD.category_id, OLD.linked_person_id, OLD.is_merchant, OLD.transaction_count, OLD.total_spent, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.normalized_name, NEW.aliases, NEW.search_text, NEW.category_id, NEW.linked_person_id, NEW.is_merchant, NEW.transaction_count, NEW.total_spent, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'payee' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('payee', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_insert AFTER INSERT ON transactions
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_update AFTER UPDATE ON transactions
WHEN (OLD.external_id, OLD.account_id, OLD.category_id, OLD.payee_id, OLD.amount, OLD.date, OLD.note, OLD.time, OLD.is_transfer, OLD.transfer_to_account_id, OLD.destination_amount, OLD.exchange_rate, OLD.created_at) IS NOT (NEW.external_id, NEW.account_id, NEW.category_id, NEW.payee_id, NEW.amount, NEW.date, NEW.note, NEW.time, NEW.is_transfer, NEW.transfer_to_account_id, NEW.destination_amount, NEW.exchange_rate, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_delete AFTER DELETE ON transactions
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = OLD.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', OLD.id, 'delete', CAST(unixepoch('subsec') * 1000 AS INTEGER), OLD.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_category_type AFTER UPDATE OF type ON categories
WHEN OLD.type IS NOT NEW.type
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id IN (SELECT id FROM transactions WHERE category_id = NEW.id);
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE category_id = NEW.id;
END;
