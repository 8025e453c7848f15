ALTER TABLE `transactions` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `transactions` ADD `updated_by` text;