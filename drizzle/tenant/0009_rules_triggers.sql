-- Rules (CONTRACT §23) in the change feed, kept by triggers like every other kind (0005, 0007).
-- A rule is deleted for real, so its deletion leaves a tombstone, as a transaction's does.
CREATE TRIGGER change_log_rule_insert AFTER INSERT ON rules
BEGIN
  DELETE FROM change_log WHERE resource = 'rule' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('rule', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_rule_update AFTER UPDATE ON rules
WHEN (OLD.external_id, OLD.name, OLD.priority, OLD.is_active, OLD.match, OLD.conditions, OLD.actions, OLD.stop_processing, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.priority, NEW.is_active, NEW.match, NEW.conditions, NEW.actions, NEW.stop_processing, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'rule' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('rule', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_rule_delete AFTER DELETE ON rules
BEGIN
  DELETE FROM change_log WHERE resource = 'rule' AND entity_id = OLD.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('rule', OLD.id, 'delete', CAST(unixepoch('subsec') * 1000 AS INTEGER), OLD.external_id);
END;
--> statement-breakpoint
-- A transaction's originalDescription is part of it: the update trigger of 0005 again, with the new column.
DROP TRIGGER change_log_transaction_update;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_update AFTER UPDATE ON transactions
WHEN (OLD.external_id, OLD.account_id, OLD.category_id, OLD.payee_id, OLD.amount, OLD.date, OLD.note, OLD.original_description, OLD.time, OLD.is_transfer, OLD.transfer_to_account_id, OLD.destination_amount, OLD.exchange_rate, OLD.created_at) IS NOT (NEW.external_id, NEW.account_id, NEW.category_id, NEW.payee_id, NEW.amount, NEW.date, NEW.note, NEW.original_description, NEW.time, NEW.is_transfer, NEW.transfer_to_account_id, NEW.destination_amount, NEW.exchange_rate, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
