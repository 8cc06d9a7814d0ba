import type { PageProps } from '../ui.tsx';

export function WebhooksPage(_props: PageProps) {
  return <h1>webhooks</h1>;
}
