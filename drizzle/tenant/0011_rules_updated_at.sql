-- A rule's updatedAt (CONTRACT §25): kept from the change feed like every resource's (0010).
ALTER TABLE `rules` ADD `updated_at` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- Existing rules: the time of their latest change the feed knows, never before they were made
-- (CONTRACT §25, as 0010 did for the other resources).
UPDATE rules SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'rule' AND entity_id = rules.id AND op = 'upsert'), 0));
--> statement-breakpoint
CREATE TRIGGER rules_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'rule' AND NEW.op = 'upsert'
BEGIN
  UPDATE rules SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
