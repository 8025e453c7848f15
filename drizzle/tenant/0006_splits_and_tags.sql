CREATE TABLE `tags` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`normalized_name` text NOT NULL,
	`color` text,
	`is_archived` integer NOT NULL,
	`transaction_count` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_external_id_idx` ON `tags` (`external_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `tags_normalized_name_idx` ON `tags` (`normalized_name`);--> statement-breakpoint
CREATE INDEX `tags_list_idx` ON `tags` (`is_archived`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tags_created_idx` ON `tags` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `transaction_splits` (
	`id` text PRIMARY KEY NOT NULL,
	`transaction_id` text NOT NULL,
	`position` integer NOT NULL,
	`amount` integer NOT NULL,
	`category_id` text,
	`payee_id` text,
	`note` text,
	`date` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`transaction_id`) REFERENCES `transactions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payee_id`) REFERENCES `payees`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transaction_splits_order_idx` ON `transaction_splits` (`transaction_id`,`position`);--> statement-breakpoint
CREATE INDEX `transaction_splits_category_idx` ON `transaction_splits` (`category_id`,`date`,`created_at`,`transaction_id`) WHERE category_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `transaction_splits_payee_idx` ON `transaction_splits` (`payee_id`,`date`,`created_at`,`transaction_id`) WHERE payee_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `transaction_tags` (
	`transaction_id` text NOT NULL,
	`tag_id` text NOT NULL,
	`position` integer NOT NULL,
	`date` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`transaction_id`) REFERENCES `transactions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transaction_tags_pk` ON `transaction_tags` (`transaction_id`,`tag_id`);--> statement-breakpoint
CREATE INDEX `transaction_tags_tag_idx` ON `transaction_tags` (`tag_id`,`date`,`created_at`,`transaction_id`);--> statement-breakpoint
ALTER TABLE `transactions` ADD `has_splits` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `transactions` ADD `has_tags` integer DEFAULT 0 NOT NULL;