CREATE TABLE `schedule_occurrences` (
	`schedule_id` text NOT NULL,
	`date` text NOT NULL,
	`state` text NOT NULL,
	`transaction_id` text,
	PRIMARY KEY(`schedule_id`, `date`)
);
--> statement-breakpoint
CREATE INDEX `schedule_occurrences_transaction_idx` ON `schedule_occurrences` (`transaction_id`);--> statement-breakpoint
CREATE TABLE `schedules` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`account_id` text NOT NULL,
	`amount` integer NOT NULL,
	`amount_tolerance` integer NOT NULL,
	`payee_id` text,
	`category_id` text,
	`tag_ids` text NOT NULL,
	`note` text,
	`is_transfer` integer NOT NULL,
	`transfer_to_account_id` text,
	`destination_amount` integer,
	`recurrence` text NOT NULL,
	`auto_post` integer NOT NULL,
	`match_window_days` integer NOT NULL,
	`is_active` integer NOT NULL,
	`posted_through` text,
	`next_post` text,
	`created_at` integer NOT NULL,
	`updated_at` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payee_id`) REFERENCES `payees`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`transfer_to_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `schedules_external_id_idx` ON `schedules` (`external_id`);--> statement-breakpoint
CREATE INDEX `schedules_created_idx` ON `schedules` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `schedules_next_post_idx` ON `schedules` (`next_post`) WHERE next_post IS NOT NULL;--> statement-breakpoint
ALTER TABLE `transactions` ADD `schedule_id` text;--> statement-breakpoint
CREATE INDEX `transactions_schedule_idx` ON `transactions` (`account_id`,`date`) WHERE schedule_id IS NOT NULL AND external_id LIKE 'sched:%';