DROP INDEX `payees_usage_idx`;--> statement-breakpoint
CREATE INDEX `payees_usage_idx` ON `payees` ("transaction_count" DESC,`created_at`,`id`);