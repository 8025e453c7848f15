-- An import preset's updatedAt (CONTRACT §25): kept from the change feed like every resource's (0010, 0016).
ALTER TABLE `import_presets` ADD `updated_at` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- Existing presets: the time of their latest change the feed knows, never before they were made.
UPDATE import_presets SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'import_preset' AND entity_id = import_presets.id AND op = 'upsert'), 0));
--> statement-breakpoint
-- The feed's update trigger lists its columns (0013), so setting updated_at records no change of its own.
CREATE TRIGGER import_presets_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'import_preset' AND NEW.op = 'upsert'
BEGIN
  UPDATE import_presets SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
