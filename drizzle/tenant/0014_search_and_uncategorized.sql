CREATE TABLE `search_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `transaction_search` (
	`id` integer PRIMARY KEY NOT NULL,
	`transaction_id` text NOT NULL,
	`text` text NOT NULL,
	FOREIGN KEY (`transaction_id`) REFERENCES `transactions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transaction_search_transaction_idx` ON `transaction_search` (`transaction_id`);--> statement-breakpoint
CREATE INDEX `transaction_splits_uncategorized_idx` ON `transaction_splits` (`date`,`created_at`,`transaction_id`) WHERE category_id IS NULL;--> statement-breakpoint
CREATE INDEX `transactions_uncategorized_idx` ON `transactions` (`date`,`created_at`,`id`) WHERE category_id IS NULL AND has_splits = 0 AND is_transfer = 0;