-- Splits and tags (CONTRACT §21, §22) in the change feed, kept by triggers like every other kind
-- (0005): a tag is a resource of its own; a transaction's legs and tags are part of the
-- transaction, so adding or removing one is a change of that transaction. The guard on the
-- parent keeps a deleted transaction's tombstone: its legs and tags go by cascade after it.
CREATE TRIGGER change_log_tag_insert AFTER INSERT ON tags
BEGIN
  DELETE FROM change_log WHERE resource = 'tag' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('tag', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_tag_update AFTER UPDATE ON tags
WHEN (OLD.external_id, OLD.name, OLD.normalized_name, OLD.color, OLD.is_archived, OLD.transaction_count, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.normalized_name, NEW.color, NEW.is_archived, NEW.transaction_count, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'tag' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('tag', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_split_insert AFTER INSERT ON transaction_splits
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.transaction_id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE id = NEW.transaction_id;
END;
--> statement-breakpoint
CREATE TRIGGER change_log_split_delete AFTER DELETE ON transaction_splits
WHEN EXISTS (SELECT 1 FROM transactions WHERE id = OLD.transaction_id)
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = OLD.transaction_id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE id = OLD.transaction_id;
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_tag_insert AFTER INSERT ON transaction_tags
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.transaction_id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE id = NEW.transaction_id;
END;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_tag_delete AFTER DELETE ON transaction_tags
WHEN EXISTS (SELECT 1 FROM transactions WHERE id = OLD.transaction_id)
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = OLD.transaction_id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions WHERE id = OLD.transaction_id;
END;
--> statement-breakpoint
-- A leg's categoryType is its category's type, as a transaction's is (0005's change_log_category_type).
CREATE TRIGGER change_log_split_category_type AFTER UPDATE OF type ON categories
WHEN OLD.type IS NOT NEW.type
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id IN (SELECT transaction_id FROM transaction_splits WHERE category_id = NEW.id);
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'transaction', id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), external_id FROM transactions
  WHERE id IN (SELECT transaction_id FROM transaction_splits WHERE category_id = NEW.id);
END;
--> statement-breakpoint
-- Legs and tag rows carry their transaction's date for the filters' index order; it follows a
-- changed date in the same statement, whoever writes it.
CREATE TRIGGER transaction_parts_date AFTER UPDATE OF date ON transactions
WHEN OLD.date IS NOT NEW.date
BEGIN
  UPDATE transaction_splits SET date = NEW.date WHERE transaction_id = NEW.id;
  UPDATE transaction_tags SET date = NEW.date WHERE transaction_id = NEW.id;
END;
