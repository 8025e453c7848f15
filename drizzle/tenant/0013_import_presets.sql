CREATE TABLE `import_presets` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`delimiter` text,
	`header_row` integer NOT NULL,
	`skip_rows` integer NOT NULL,
	`skip_footer_rows` integer,
	`decimal_separator` text,
	`date_format` text,
	`amount_positive_is` text NOT NULL,
	`columns` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `import_presets_created_idx` ON `import_presets` (`created_at`,`id`);--> statement-breakpoint
-- Import presets in the change feed (CONTRACT §15, §24), kept by triggers like every other kind
-- (0005). A preset is deleted, not archived: its deletion leaves a tombstone, as a transaction's does.
CREATE TRIGGER change_log_import_preset_insert AFTER INSERT ON import_presets
BEGIN
  DELETE FROM change_log WHERE resource = 'import_preset' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('import_preset', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_import_preset_update AFTER UPDATE ON import_presets
WHEN (OLD.name, OLD.delimiter, OLD.header_row, OLD.skip_rows, OLD.skip_footer_rows, OLD.decimal_separator, OLD.date_format, OLD.amount_positive_is, OLD.columns, OLD.created_at) IS NOT (NEW.name, NEW.delimiter, NEW.header_row, NEW.skip_rows, NEW.skip_footer_rows, NEW.decimal_separator, NEW.date_format, NEW.amount_positive_is, NEW.columns, NEW.created_at)
BEGIN
  DELETE FROM change_log WHERE resource = 'import_preset' AND entity_id = NEW.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('import_preset', NEW.id, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_import_preset_delete AFTER DELETE ON import_presets
BEGIN
  DELETE FROM change_log WHERE resource = 'import_preset' AND entity_id = OLD.id;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('import_preset', OLD.id, 'delete', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
