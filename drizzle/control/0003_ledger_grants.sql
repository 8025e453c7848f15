CREATE TABLE `ledger_grants` (
	`id` text PRIMARY KEY NOT NULL,
	`subject_owner_id` text NOT NULL,
	`grantee_owner_id` text NOT NULL,
	`scopes` text NOT NULL,
	`label` text,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`subject_owner_id`) REFERENCES `owners`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`grantee_owner_id`) REFERENCES `owners`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `ledger_grants_subject_idx` ON `ledger_grants` (`subject_owner_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `ledger_grants_grantee_idx` ON `ledger_grants` (`grantee_owner_id`,`subject_owner_id`);