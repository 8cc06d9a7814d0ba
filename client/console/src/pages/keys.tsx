import type { PageProps } from '../ui.tsx';

export function KeysPage(_props: PageProps) {
  return <h1>keys</h1>;
}
