-- The updatedAt triggers of 0010 and 0011 wrote every feed entry's time into its row even when the
-- row already held it (a batch touching one account 500 times wrote it 500 times). Made again so a
-- row is written only when its updatedAt moves; what they store is the same.
DROP TRIGGER IF EXISTS accounts_updated_at;
--> statement-breakpoint
CREATE TRIGGER accounts_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'account' AND NEW.op = 'upsert'
BEGIN
  UPDATE accounts SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS categories_updated_at;
--> statement-breakpoint
CREATE TRIGGER categories_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'category' AND NEW.op = 'upsert'
BEGIN
  UPDATE categories SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS payees_updated_at;
--> statement-breakpoint
CREATE TRIGGER payees_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'payee' AND NEW.op = 'upsert'
BEGIN
  UPDATE payees SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS tags_updated_at;
--> statement-breakpoint
CREATE TRIGGER tags_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'tag' AND NEW.op = 'upsert'
BEGIN
  UPDATE tags SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS transactions_updated_at;
--> statement-breakpoint
CREATE TRIGGER transactions_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'transaction' AND NEW.op = 'upsert'
BEGIN
  UPDATE transactions SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
--> statement-breakpoint
DROP TRIGGER IF EXISTS rules_updated_at;
--> statement-breakpoint
CREATE TRIGGER rules_updated_at AFTER INSERT ON change_log
WHEN NEW.resource = 'rule' AND NEW.op = 'upsert'
BEGIN
  UPDATE rules SET updated_at = NEW.changed_at WHERE id = NEW.entity_id AND updated_at < NEW.changed_at;
END;
