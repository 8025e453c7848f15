CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`type` text NOT NULL,
	`subtype` text,
	`provider_slug` text,
	`secondary_provider_slug` text,
	`balance` integer NOT NULL,
	`currency` text NOT NULL,
	`color` text,
	`icon` text,
	`linked_account_id` text,
	`is_archived` integer NOT NULL,
	`is_liability` integer NOT NULL,
	`is_favourite` integer NOT NULL,
	`show_in_dashboard` integer NOT NULL,
	`is_hidden` integer NOT NULL,
	`notes` text,
	`sort_order` real,
	`account_number` text,
	`custom_fields` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`linked_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_external_id_idx` ON `accounts` (`external_id`);--> statement-breakpoint
CREATE INDEX `accounts_list_idx` ON `accounts` (`is_archived`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `accounts_created_idx` ON `accounts` (`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `applied_requests` (
	`key` text PRIMARY KEY NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer NOT NULL,
	`body` text NOT NULL,
	`location` text,
	`request_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `applied_requests_created_idx` ON `applied_requests` (`created_at`);--> statement-breakpoint
CREATE TABLE `categories` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`icon` text,
	`color` text,
	`type` text,
	`parent_id` text,
	`preset_key` text,
	`is_archived` integer NOT NULL,
	`is_system` integer NOT NULL,
	`countries` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`parent_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `categories_external_id_idx` ON `categories` (`external_id`);--> statement-breakpoint
CREATE INDEX `categories_list_idx` ON `categories` (`is_system`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `categories_parent_idx` ON `categories` (`parent_id`);--> statement-breakpoint
CREATE TABLE `payee_aliases` (
	`payee_id` text NOT NULL,
	`normalized_alias` text NOT NULL,
	FOREIGN KEY (`payee_id`) REFERENCES `payees`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payee_aliases_pk` ON `payee_aliases` (`payee_id`,`normalized_alias`);--> statement-breakpoint
CREATE INDEX `payee_aliases_lookup_idx` ON `payee_aliases` (`normalized_alias`);--> statement-breakpoint
CREATE TABLE `payees` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`name` text NOT NULL,
	`normalized_name` text NOT NULL,
	`aliases` text NOT NULL,
	`search_text` text NOT NULL,
	`category_id` text,
	`linked_person_id` text,
	`is_merchant` integer NOT NULL,
	`transaction_count` integer NOT NULL,
	`total_spent` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payees_external_id_idx` ON `payees` (`external_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `payees_normalized_name_idx` ON `payees` (`normalized_name`);--> statement-breakpoint
CREATE INDEX `payees_created_idx` ON `payees` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `payees_usage_idx` ON `payees` (`transaction_count`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `profile` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text,
	`email` text,
	`country` text,
	`default_currency` text,
	`preferred_language` text,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`external_id` text,
	`account_id` text NOT NULL,
	`category_id` text,
	`payee_id` text,
	`amount` integer NOT NULL,
	`date` text NOT NULL,
	`note` text,
	`time` text,
	`is_transfer` integer NOT NULL,
	`transfer_to_account_id` text,
	`destination_amount` integer,
	`exchange_rate` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`payee_id`) REFERENCES `payees`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`transfer_to_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transactions_external_id_idx` ON `transactions` (`external_id`);--> statement-breakpoint
CREATE INDEX `transactions_list_idx` ON `transactions` (`date`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_account_idx` ON `transactions` (`account_id`,`date`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_transfer_to_idx` ON `transactions` (`transfer_to_account_id`,`date`,`created_at`,`id`) WHERE transfer_to_account_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `transactions_category_idx` ON `transactions` (`category_id`,`date`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `transactions_payee_idx` ON `transactions` (`payee_id`,`date`,`created_at`,`id`);