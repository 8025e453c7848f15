CREATE TABLE `rules` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`priority` integer NOT NULL,
	`is_active` integer NOT NULL,
	`match` text NOT NULL,
	`conditions` text NOT NULL,
	`actions` text NOT NULL,
	`stop_processing` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rules_external_id_idx` ON `rules` (`external_id`);--> statement-breakpoint
CREATE INDEX `rules_order_idx` ON `rules` (`priority`,`created_at`,`id`);--> statement-breakpoint
ALTER TABLE `transactions` ADD `original_description` text;