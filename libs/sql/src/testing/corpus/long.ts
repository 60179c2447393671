// ORM-sized statements (10-20 columns, 8-16 AND-ed conditions, joins): analyzed by node-sql-parser and routed by key.
import { cases } from './types';

const cols = (alias: string, names: string, quote: string): string =>
  names.split(' ').map((n) => `${quote}${alias}${quote}.${quote}${n}${quote}`).join(', ');
const ORDER_COLUMNS = 'id user_id product_id status total currency created_at updated_at paid_at shipped_at note coupon channel region version';

const my = cases('mysql', 'ORM-sized');
my.add(
  `SELECT ${cols('Order', ORDER_COLUMNS, '`')}, \`User\`.\`name\` AS \`User.name\`, \`User\`.\`email\` AS \`User.email\` ` +
    'FROM `orders` AS `Order` INNER JOIN `users` AS `User` ON `Order`.`user_id` = `User`.`id` ' +
    "WHERE (`Order`.`deleted_at` IS NULL AND (`Order`.`user_id` = 7 AND `Order`.`status` IN ('paid', 'shipped') AND `Order`.`total` >= 10 " +
    "AND `Order`.`currency` = 'EUR' AND `Order`.`created_at` >= '2024-01-01' AND `Order`.`created_at` < '2024-02-01' AND `Order`.`channel` <> 'pos' " +
    "AND `Order`.`coupon` IS NOT NULL AND `Order`.`region` LIKE 'eu%')) ORDER BY `Order`.`created_at` DESC LIMIT 20 OFFSET 40",
  'read',
  'replica',
  ['s3'],
  { keys: [7], tables: ['orders', 'users'] },
);
my.add(
  'select order0_.id as id1_0_, order0_.user_id as user_id2_0_, order0_.product_id as product3_0_, order0_.status as status4_0_, ' +
    'order0_.total as total5_0_, order0_.currency as currency6_0_, order0_.created_at as created7_0_, order0_.updated_at as updated8_0_, ' +
    'product1_.id as id1_1_, product1_.name as name2_1_, product1_.price as price3_1_, warehouse2_.code as code1_2_ ' +
    'from orders order0_ inner join products product1_ on order0_.product_id=product1_.id ' +
    'left outer join warehouses warehouse2_ on product1_.warehouse_id=warehouse2_.id and warehouse2_.active=1 ' +
    'where order0_.user_id=? and order0_.status=? and order0_.total>=? and order0_.currency=? and order0_.created_at>=? ' +
    'and order0_.created_at<? and product1_.price>? and warehouse2_.code<>? and order0_.version=? and order0_.id in (? , ? , ?) ' +
    'order by order0_.created_at desc limit ?',
  'read',
  'replica',
  ['s1'],
  { keys: [9], params: [9, 'paid', 10, 'EUR', '2024-01-01', '2024-02-01', 5, 'X', 3, 1, 2, 3, 20] },
);
my.add(
  "UPDATE `orders` SET `status` = 'shipped', `shipped_at` = '2024-01-05 10:00:00', `updated_at` = NOW(), `version` = `version` + 1, `note` = 'ok' " +
    "WHERE `user_id` = 5 AND `id` = 90 AND `version` = 3 AND `status` = 'paid' AND `deleted_at` IS NULL AND `total` > 0 AND `currency` = 'EUR' AND `region` = 'eu'",
  'write',
  'primary',
  ['s1'],
  { keys: [5] },
);

const pg = cases('postgresql', 'ORM-sized');
pg.add(
  `SELECT ${cols('public"."orders', ORDER_COLUMNS, '"')} FROM "public"."orders" ` +
    'WHERE ("public"."orders"."customer_id" = $1 AND "public"."orders"."status" IN ($2, $3) AND "public"."orders"."total" >= $4 ' +
    'AND "public"."orders"."currency" = $5 AND "public"."orders"."created_at" >= $6 AND "public"."orders"."created_at" < $7 ' +
    'AND "public"."orders"."deleted_at" IS NULL AND "public"."orders"."region" = $8) ' +
    'ORDER BY "public"."orders"."created_at" DESC LIMIT $9 OFFSET $10',
  'read',
  'replica',
  ['p1'],
  { keys: [11], params: [11, 'paid', 'shipped', 10, 'EUR', '2024-01-01', '2024-02-01', 'eu', 20, 0] },
);
pg.add(
  'SELECT "o"."id" AS "o_id", "o"."status" AS "o_status", "o"."total" AS "o_total", "o"."created_at" AS "o_created_at", ' +
    '"p"."id" AS "p_id", "p"."name" AS "p_name", "p"."price" AS "p_price", "c"."id" AS "c_id", "c"."label" AS "c_label", "o"."note" AS "o_note" ' +
    'FROM "orders" "o" INNER JOIN "products" "p" ON "p"."id" = "o"."product_id" AND "p"."deleted_at" IS NULL ' +
    'LEFT JOIN "categories" "c" ON "c"."id" = "p"."category_id" ' +
    "WHERE \"o\".\"customer_id\" = 10 AND \"o\".\"status\" = 'paid' AND ((\"o\".\"total\" >= 10 AND \"o\".\"total\" < 500) OR \"o\".\"coupon\" IS NOT NULL) " +
    "AND \"p\".\"price\" > 5 AND \"c\".\"label\" <> 'hidden' AND \"o\".\"created_at\" >= '2024-01-01' AND \"o\".\"region\" = 'eu' AND \"o\".\"version\" > 0 " +
    'ORDER BY "o"."created_at" DESC LIMIT 25',
  'read',
  'replica',
  ['p0'],
  { keys: [10], tables: ['orders', 'products', 'categories'] },
);

// Ten nested groups: node-sql-parser's PostgreSQL grammar would backtrack for ~50 ms, so the probe counts them past the bound.
let nested = '"a" = 1';
for (let i = 0; i < 10; i++) nested = `(${nested} OR "b${i}" = ${i})`;
pg.add(`SELECT * FROM "User" WHERE "id" = 3 AND ${nested}`, 'read', 'primary', 'reject:DBP_ERR_SQL_SHARD_UNSUPPORTED', { reasons: ['too_complex'] });

export const LONG = [...my.list, ...pg.list];
