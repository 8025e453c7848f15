/**
 * The system categories every owner's database is seeded with (CONTRACT §10, §13).
 *
 * The seed itself is the SQL migration `drizzle/tenant/0001_seed_system_categories.sql`,
 * so a copied tenant file is self-contained; this list mirrors it for code and tests
 * (`test/categories/presets.test.ts` checks that the two agree row for row).
 *
 * Every preset has the id `cat_sys_<presetKey>`, the same for every owner. Its `created_at`
 * is its position in this list (0, 1, 2, …): fixed, identical in every file, and older than
 * any custom category, so system categories list first, parents before their children.
 * `countries` is null for presets meant for everyone; the few country-specific ones hang
 * below a parent that everyone sees.
 */
export interface Preset {
  presetKey: string
  name: string
  type: 'expense' | 'income' | null
  icon: string
  color: string
  parentKey: string | null
  countries: string[] | null
}

type Child = [presetKey: string, name: string, icon: string, countries?: string[]]
type Group = { key: string; name: string; type: Preset['type']; icon: string; color: string; children?: Child[] }

const GROUPS: Group[] = [
  {
    key: 'food_drinks',
    name: 'Food & Drinks',
    type: 'expense',
    icon: 'utensils',
    color: '#E67E22',
    children: [
      ['groceries', 'Groceries', 'shopping-basket'],
      ['restaurants', 'Restaurants', 'utensils'],
      ['coffee', 'Coffee', 'coffee'],
    ],
  },
  {
    key: 'housing',
    name: 'Housing',
    type: 'expense',
    icon: 'home',
    color: '#8E44AD',
    children: [
      ['rent', 'Rent', 'key'],
      ['mortgage', 'Mortgage', 'landmark'],
      ['utilities', 'Utilities', 'bolt'],
    ],
  },
  {
    key: 'transport',
    name: 'Transport',
    type: 'expense',
    icon: 'car',
    color: '#2980B9',
    children: [
      ['fuel', 'Fuel', 'gas-pump'],
      ['public_transport', 'Public transport', 'bus'],
      ['parking', 'Parking', 'square-parking'],
      ['taxi', 'Taxi & Rideshare', 'taxi'],
    ],
  },
  {
    key: 'shopping',
    name: 'Shopping',
    type: 'expense',
    icon: 'shopping-bag',
    color: '#D35400',
    children: [['clothing', 'Clothing', 'shirt']],
  },
  {
    key: 'health',
    name: 'Health',
    type: 'expense',
    icon: 'heart-pulse',
    color: '#C0392B',
    children: [
      ['pharmacy', 'Pharmacy', 'pills'],
      ['doctor', 'Doctor', 'stethoscope'],
    ],
  },
  {
    key: 'entertainment',
    name: 'Entertainment',
    type: 'expense',
    icon: 'film',
    color: '#16A085',
    children: [['subscriptions', 'Subscriptions', 'tv']],
  },
  {
    key: 'travel',
    name: 'Travel',
    type: 'expense',
    icon: 'plane',
    color: '#1ABC9C',
    children: [
      ['flights', 'Flights', 'plane-departure'],
      ['accommodation', 'Accommodation', 'bed'],
    ],
  },
  { key: 'education', name: 'Education', type: 'expense', icon: 'graduation-cap', color: '#27AE60' },
  { key: 'personal_care', name: 'Personal care', type: 'expense', icon: 'spa', color: '#F39C12' },
  {
    key: 'bills_fees',
    name: 'Bills & Fees',
    type: 'expense',
    icon: 'file-invoice',
    color: '#7F8C8D',
    children: [
      ['phone_internet', 'Phone & Internet', 'wifi'],
      ['insurance', 'Insurance', 'shield'],
      ['bank_fees', 'Bank fees', 'building-columns'],
      ['taxes', 'Taxes', 'receipt'],
      ['pix_fees', 'Pix fees', 'bolt', ['BR']],
      ['kirchensteuer', 'Kirchensteuer', 'church', ['DE']],
    ],
  },
  { key: 'gifts_donations', name: 'Gifts & Donations', type: 'expense', icon: 'gift', color: '#E84393' },
  {
    key: 'savings',
    name: 'Savings & Investments',
    type: 'expense',
    icon: 'piggy-bank',
    color: '#2C3E50',
    children: [['contribution_401k', '401(k) contribution', 'piggy-bank', ['US']]],
  },
  {
    key: 'income',
    name: 'Income',
    type: 'income',
    icon: 'wallet',
    color: '#2ECC71',
    children: [
      ['salary', 'Salary', 'briefcase'],
      ['bonus', 'Bonus', 'star'],
      ['interest', 'Interest', 'percent'],
      ['refunds', 'Refunds', 'rotate-left'],
      ['gifts_received', 'Gifts received', 'gift'],
      ['thirteenth_salary', '13th salary', 'calendar-plus', ['BR', 'PT']],
    ],
  },
  { key: 'transfers', name: 'Transfers', type: null, icon: 'right-left', color: '#95A5A6' },
  { key: 'other', name: 'Other', type: null, icon: 'ellipsis', color: '#BDC3C7' },
]

export const PRESETS: readonly Preset[] = GROUPS.flatMap((group) => [
  { presetKey: group.key, name: group.name, type: group.type, icon: group.icon, color: group.color, parentKey: null, countries: null },
  ...(group.children ?? []).map(([presetKey, name, icon, countries]) => ({
    presetKey,
    name,
    type: group.type,
    icon,
    color: group.color,
    parentKey: group.key,
    countries: countries ?? null,
  })),
])

export const systemCategoryId = (presetKey: string) => `cat_sys_${presetKey}`

/** The INSERT statement of the seed migration, as it was generated from this list. */
export function presetSeedSql(): string {
  const quote = (value: string | null) => (value === null ? 'NULL' : `'${value.replaceAll("'", "''")}'`)
  const rows = PRESETS.map((p, index) =>
    [
      quote(systemCategoryId(p.presetKey)),
      'NULL',
      quote(p.name),
      quote(p.icon),
      quote(p.color),
      quote(p.type),
      quote(p.parentKey === null ? null : systemCategoryId(p.parentKey)),
      quote(p.presetKey),
      '0',
      '1',
      quote(p.countries === null ? null : JSON.stringify(p.countries)),
      String(index),
    ].join(', '),
  )
  return `INSERT INTO \`categories\` (\`id\`, \`external_id\`, \`name\`, \`icon\`, \`color\`, \`type\`, \`parent_id\`, \`preset_key\`, \`is_archived\`, \`is_system\`, \`countries\`, \`created_at\`) VALUES\n${rows.map((r) => `  (${r})`).join(',\n')};\n`
}
