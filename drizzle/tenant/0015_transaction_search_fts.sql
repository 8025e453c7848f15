-- Text search over transactions (CONTRACT §26): an FTS5 trigram index over transaction_search.text,
-- which holds each transaction's texts already normalized (case, accents, compatibility forms,
-- spaces) by the code that writes them. External content: the index keeps no second copy of the
-- text; these triggers keep it in step with every insert, change and delete of a row (a
-- transaction's deletion removes its row by cascade, which fires the delete trigger).
-- columnsize=0: no per-row sizes (nothing ranks by them), one table fewer to write per change.
CREATE VIRTUAL TABLE transaction_search_fts USING fts5(text, content = 'transaction_search', content_rowid = 'id', tokenize = 'trigram', columnsize = 0);
--> statement-breakpoint
CREATE TRIGGER transaction_search_fts_insert AFTER INSERT ON transaction_search
BEGIN
  INSERT INTO transaction_search_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
--> statement-breakpoint
CREATE TRIGGER transaction_search_fts_delete AFTER DELETE ON transaction_search
BEGIN
  INSERT INTO transaction_search_fts (transaction_search_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
END;
--> statement-breakpoint
CREATE TRIGGER transaction_search_fts_update AFTER UPDATE ON transaction_search
BEGIN
  INSERT INTO transaction_search_fts (transaction_search_fts, rowid, text) VALUES ('delete', OLD.id, OLD.text);
  INSERT INTO transaction_search_fts (rowid, text) VALUES (NEW.id, NEW.text);
END;
