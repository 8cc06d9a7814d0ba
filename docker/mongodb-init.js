// One-shot of docker compose (service mongodb-init, mongosh --nodb): the platform's own MongoDB
// user, with readWrite on the `platform` database and nothing else. It is the only process besides
// mongodb itself that holds the root credentials. It creates the user, or resets its password and
// roles when it exists, so it runs at every `docker compose up`, on a new volume or an old one.
const env = process.env;
for (const name of ['MONGO_ROOT_USER', 'MONGO_ROOT_PASSWORD', 'MONGO_PLATFORM_USER', 'MONGO_PLATFORM_PASSWORD']) {
  if (!env[name]) throw new Error(`mongodb-init: ${name} is not set`);
}
if (env.MONGO_PLATFORM_USER === env.MONGO_ROOT_USER) throw new Error('mongodb-init: MONGO_PLATFORM_USER must not be the root user');

const uri = `mongodb://${encodeURIComponent(env.MONGO_ROOT_USER)}:${encodeURIComponent(env.MONGO_ROOT_PASSWORD)}@mongodb:27017/admin?authSource=admin`;
const platform = connect(uri).getSiblingDB('platform');
const user = env.MONGO_PLATFORM_USER;
const roles = [{ role: 'readWrite', db: 'platform' }];
if (platform.getUser(user)) platform.updateUser(user, { pwd: env.MONGO_PLATFORM_PASSWORD, roles });
else platform.createUser({ user, pwd: env.MONGO_PLATFORM_PASSWORD, roles });
print(`mongodb-init: ${user} has readWrite on the platform database only`);
