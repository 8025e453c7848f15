-- Schedules (CONTRACT §29) in the change feed, kept by triggers like every other kind (0009).
-- A schedule is deleted for real, so its deletion leaves a tombstone. Auto-posting's own
-- bookkeeping (posted_through, next_post) is not part of the schedule a client sees: it is no change.
CREATE TRIGGER change_log_schedule_insert AFTER INSERT ON schedules
BEGIN
  DELETE FROM change_log WHERE resource = 'schedule' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('schedule', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_schedule_update AFTER UPDATE ON schedules
WHEN (OLD.external_id, OLD.name, OLD.account_id, OLD.amount, OLD.amount_tolerance, OLD.payee_id, OLD.category_id, OLD.tag_ids, OLD.note, OLD.is_transfer, OLD.transfer_to_account_id, OLD.destination_amount, OLD.recurrence, OLD.auto_post, OLD.match_window_days, OLD.is_active, OLD.created_at) IS NOT (NEW.external_id, NEW.name, NEW.account_id, NEW.amount, NEW.amount_tolerance, NEW.payee_id, NEW.category_id, NEW.tag_ids, NEW.note, NEW.is_transfer, NEW.transfer_to_account_id, NEW.destination_amount, NEW.recurrence, NEW.auto_post, NEW.match_window_days, NEW.is_active, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'schedule' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('schedule', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_schedule_delete AFTER DELETE ON schedules
BEGIN
  DELETE FROM change_log WHERE resource = 'schedule' AND entity_id = OLD.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('schedule', OLD.id, 'delete', CAST(unixepoch('subsec') * 1000 AS INTEGER), OLD.external_id);
END;
--> statement-breakpoint
-- A schedule's updatedAt (CONTRACT §25), from the feed like every resource's (0010).
CREATE TRIGGER schedules_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'schedule' AND NEW.op = 'upsert'
BEGIN
  UPDATE schedules SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
-- A transaction's scheduleId is part of it: the update trigger of 0009 again, with the new column.
DROP TRIGGER change_log_transaction_update;
--> statement-breakpoint
CREATE TRIGGER change_log_transaction_update AFTER UPDATE ON transactions
WHEN (OLD.external_id, OLD.account_id, OLD.category_id, OLD.payee_id, OLD.amount, OLD.date, OLD.note, OLD.original_description, OLD.time, OLD.is_transfer, OLD.transfer_to_account_id, OLD.destination_amount, OLD.exchange_rate, OLD.created_at, OLD.schedule_id) IS NOT (NEW.external_id, NEW.account_id, NEW.category_id, NEW.payee_id, NEW.amount, NEW.date, NEW.note, NEW.original_description, NEW.time, NEW.is_transfer, NEW.transfer_to_account_id, NEW.destination_amount, NEW.exchange_rate, NEW.created_at, NEW.schedule_id)
BEGIN
  DELETE FROM change_log WHERE resource = 'transaction' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('transaction', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NEW.external_id);
END;
