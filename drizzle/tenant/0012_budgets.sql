CREATE TABLE `budget_lines` (
	`month` text NOT NULL,
	`category_id` text NOT NULL,
	`planned` integer NOT NULL,
	`note` text,
	PRIMARY KEY(`month`, `category_id`),
	FOREIGN KEY (`month`) REFERENCES `budgets`(`month`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`category_id`) REFERENCES `categories`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `budgets` (
	`month` text PRIMARY KEY NOT NULL,
	`currency` text NOT NULL
);
--> statement-breakpoint
-- A month's budget (CONTRACT §27) is summed from two indexes, written here because drizzle-kit
-- cannot write an index on an expression. Each starts with the month (substr(date, 1, 7)), so a
-- month is one equality, and goes on in the order the sums group by, with every column they
-- need: SQLite reads the month's rows once, in order, from the index alone, with no sort.
-- Transactions that count are those neither transfers nor split (legs count on their own).
CREATE INDEX `transactions_budget_idx` ON `transactions` (substr(`date`, 1, 7), `is_transfer`, `has_splits`, `account_id`, `category_id`, `amount`);
--> statement-breakpoint
CREATE INDEX `transaction_splits_budget_idx` ON `transaction_splits` (substr(`date`, 1, 7), `transaction_id`, `category_id`, `amount`);
--> statement-breakpoint
-- Budgets in the change feed (CONTRACT §15, §27), kept by triggers like every other kind (0005):
-- a month is one entity (resource 'budget', id = the month), changed by its currency and by each
-- planned amount added, changed or removed. A write that stores the same values adds nothing.
CREATE TRIGGER change_log_budget_insert AFTER INSERT ON budgets
BEGIN
  DELETE FROM change_log WHERE resource = 'budget' AND entity_id = NEW.month;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('budget', NEW.month, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_budget_update AFTER UPDATE ON budgets
WHEN OLD.currency IS NOT NEW.currency
BEGIN
  DELETE FROM change_log WHERE resource = 'budget' AND entity_id = NEW.month;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('budget', NEW.month, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_budget_line_insert AFTER INSERT ON budget_lines
BEGIN
  DELETE FROM change_log WHERE resource = 'budget' AND entity_id = NEW.month;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('budget', NEW.month, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_budget_line_update AFTER UPDATE ON budget_lines
WHEN (OLD.month, OLD.category_id, OLD.planned, OLD.note) IS NOT (NEW.month, NEW.category_id, NEW.planned, NEW.note)
BEGIN
  DELETE FROM change_log WHERE resource = 'budget' AND entity_id IN (OLD.month, NEW.month);
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  SELECT 'budget', month, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL FROM budgets WHERE month IN (OLD.month, NEW.month);
END;
--> statement-breakpoint
CREATE TRIGGER change_log_budget_line_delete AFTER DELETE ON budget_lines
BEGIN
  DELETE FROM change_log WHERE resource = 'budget' AND entity_id = OLD.month;
  INSERT INTO change_log (resource, entity_id, op, changed_at, external_id)
  VALUES ('budget', OLD.month, 'upsert', CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL);
END;
