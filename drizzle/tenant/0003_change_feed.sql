CREATE TABLE `change_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`resource` text NOT NULL,
	`entity_id` text NOT NULL,
	`op` text NOT NULL,
	`changed_at` integer NOT NULL,
	`external_id` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `change_log_entity_idx` ON `change_log` (`resource`,`entity_id`);--> statement-breakpoint
CREATE INDEX `change_log_resource_seq_idx` ON `change_log` (`resource`,`seq`);--> statement-breakpoint
CREATE INDEX `change_log_tombstone_age_idx` ON `change_log` (`changed_at`) WHERE op = 'delete';--> statement-breakpoint
CREATE INDEX `change_log_tombstone_external_idx` ON `change_log` (`resource`,`external_id`) WHERE op = 'delete';--> statement-breakpoint
CREATE TABLE `feed_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`epoch` text NOT NULL,
	`secret` text NOT NULL,
	`purged_seq` integer NOT NULL
);
