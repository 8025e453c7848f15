-- updatedAt (CONTRACT §25): every resource's time of its latest change. The columns above are
-- drizzle-kit's; the rest is written by hand.
ALTER TABLE `accounts` ADD `updated_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `categories` ADD `updated_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `payees` ADD `updated_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `tags` ADD `updated_at` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `transactions` ADD `updated_at` integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- Existing rows: the time of their latest change the feed knows (it has every entity but the fixed
-- system categories), never before they were made.
UPDATE accounts SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'account' AND entity_id = accounts.id AND op = 'upsert'), 0));
--> statement-breakpoint
UPDATE categories SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'category' AND entity_id = categories.id AND op = 'upsert'), 0));
--> statement-breakpoint
UPDATE payees SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'payee' AND entity_id = payees.id AND op = 'upsert'), 0));
--> statement-breakpoint
UPDATE tags SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'tag' AND entity_id = tags.id AND op = 'upsert'), 0));
--> statement-breakpoint
UPDATE transactions SET updated_at = max(created_at, coalesce((SELECT changed_at FROM change_log WHERE resource = 'transaction' AND entity_id = transactions.id AND op = 'upsert'), 0));
--> statement-breakpoint
-- From now on, every change the feed records of an entity is its updatedAt: its own row's writes,
-- and what follows from other writes (a balance, a payee's totals, a tag's count, a category's
-- path, a transaction's category type, legs and tags). A row starts at its createdAt (the app
-- writes it) and never goes back, whatever the clock does. The feed's update triggers list their
-- columns, so setting updated_at here records no change of its own.
CREATE TRIGGER accounts_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'account' AND NEW.op = 'upsert'
BEGIN
  UPDATE accounts SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
--> statement-breakpoint
CREATE TRIGGER categories_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'category' AND NEW.op = 'upsert'
BEGIN
  UPDATE categories SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
--> statement-breakpoint
CREATE TRIGGER payees_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'payee' AND NEW.op = 'upsert'
BEGIN
  UPDATE payees SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
--> statement-breakpoint
CREATE TRIGGER tags_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'tag' AND NEW.op = 'upsert'
BEGIN
  UPDATE tags SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
--> statement-breakpoint
CREATE TRIGGER transactions_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'transaction' AND NEW.op = 'upsert'
BEGIN
  UPDATE transactions SET updated_at = max(updated_at, NEW.changed_at) WHERE id = NEW.entity_id;
END;
