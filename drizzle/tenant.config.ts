import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/tenant/schema.ts',
  out: './drizzle/tenant',
})
