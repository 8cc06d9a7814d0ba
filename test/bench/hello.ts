/** Baseline for the bench: an h3 hello-world route served the same way as the edge (listhen). */
import { createApp, createRouter, eventHandler, toNodeListener } from 'h3';
import { listen } from 'listhen';

const app = createApp();
app.use(
  createRouter().get(
    '/hello',
    eventHandler(() => ({ hello: 'world' })),
  ),
);
const port = Number(process.env.PORT);
void listen(toNodeListener(app), { hostname: '127.0.0.1', port, showURL: false, isProd: true, qr: false }).then(() => {
  process.stdout.write('ready\n');
});
