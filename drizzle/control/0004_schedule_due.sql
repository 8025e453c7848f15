CREATE TABLE `schedule_due` (
	`owner_id` text PRIMARY KEY NOT NULL,
	`next_due` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `schedule_due_next_idx` ON `schedule_due` (`next_due`);