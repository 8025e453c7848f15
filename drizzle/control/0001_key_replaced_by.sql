ALTER TABLE `api_keys` ADD `replaced_by` text;
