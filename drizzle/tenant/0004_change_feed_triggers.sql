-- The change feed (CONTRACT §15), kept by triggers so that every write path records its
-- changes in the same transaction, and only real changes: an UPDATE that leaves a row as it
-- was records nothing. INSERT OR REPLACE moves an entity's one row to a new, higher seq.
INSERT INTO feed_state (id, epoch, secret, purged_seq) VALUES (1, lower(hex(randomblob(8))), lower(hex(randomblob(32))), 0);
--> statement-breakpoint
CREATE TRIGGER change_log_account_insert AFTER INSERT ON accounts
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('account', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_account_update AFTER UPDATE ON accounts
WHEN (OLD.external_id, OLD.name, OLD.type, OLD.subtype, OLD.provider_slug, OLD.secondary_provider_slug, OLD.balance, OLD.currency, OLD.color, OLD.icon, OLD.linked_account_id, OLD.is_archived, OLD.is_liability, OLD.is_favourite, OLD.show_in_dashboard, OLD.is_hidden, OLD.notes, OLD.sort_order, OLD.account_number, OLD.custom_fields, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.type, NEW.subtype, NEW.provider_slug, NEW.secondary_provider_slug, NEW.balance, NEW.currency, NEW.color, NEW.icon, NEW.linked_account_id, NEW.is_archived, NEW.is_liability, NEW.is_favourite, NEW.show_in_dashboard, NEW.is_hidden, NEW.notes, NEW.sort_order, NEW.account_number, NEW.custom_fields, NEW.created_at)
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('account', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_category_insert AFTER INSERT ON categories
WHEN NEW.is_system = 0
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('category', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_category_update AFTER UPDATE ON categories
WHEN (OLD.external_id, OLD.name, OLD.icon, OLD.color, OLD.type, OLD.parent_id, OLD.preset_key, OLD.is_archived, OLD.is_system, OLD.countries, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.icon, NEW.color, NEW.type, NEW.parent_id, NEW.preset_key, NEW.is_archived, NEW.is_system, NEW.countries, NEW.created_at) AND NEW.is_system = 0
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('category', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_payee_insert AFTER INSERT ON payees
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('payee', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_payee_update AFTER UPDATE ON payees
WHEN (OLD.external_id, OLD.name, OLD.normalized_name, OLD.aliases, OLD.search_text, OLD.category_id, OLD.linked_person_id, OLD.is_merchant, OLD.transaction_count, OLD.total_spent, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.normalized_name, NEW.aliases, NEW.search_text, NEW.category_id, NEW.linked_person_id, NEW.is_merchant, NEW.transaction_count, NEW.total_spent, NEW.created_at)
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('payee', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_insert AFTER INSERT ON transactions
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_update AFTER UPDATE ON transactions
WHEN (OLD.external_id, OLD.account_id, OLD.category_id, OLD.payee_id, OLD.amount, OLD.date, OLD.note, OLD.time, OLD.is_transfer, OLD.transfer_to_account_id, OLD.destination_amount, OLD.exchange_rate, OLD.created_at) IS NOT (NEW.external_id, NEW.account_id, NEW.category_id, NEW.payee_id, NEW.amount, NEW.date, NEW.note, NEW.time, NEW.is_transfer, NEW.transfer_to_account_id, NEW.destination_amount, NEW.exchange_rate, NEW.created_at)
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_delete AFTER DELETE ON transactions
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', OLD.id, 'delete', CAST(unixepoch('subsec') * 1000 AS INTEGER), OLD.external_id);
END;
--> statement-breakpoint
-- A transaction's categoryType is its category's type: when that changes, so do they.
CREATE TRIGGER change_log_category_type AFTER UPDATE OF type ON categories
WHEN OLD.type IS NOT NEW.type
BEGIN
  INSERT OR REPLACE INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE category_id = NEW.id;
END;
--> statement-breakpoint
-- What an existing file already holds enters the feed once, oldest first.
INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
SELECT 'account', id, 'upsert', created_at, external_id FROM accounts ORDER BY created_at, id;
--> statement-breakpoint
INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
SELECT 'category', id, 'upsert', created_at, external_id FROM categories WHERE is_system = 0 ORDER BY created_at, id;
--> statement-breakpoint
INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
SELECT 'payee', id, 'upsert', created_at, external_id FROM payees ORDER BY created_at, id;
--> statement-breakpoint
INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
SELECT 'transaction', id, 'upsert', created_at, external_id FROM transactions ORDER BY created_at, id;
