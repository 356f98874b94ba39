-- +goose Up
ALTER TABLE widgets ADD COLUMN colour text;
