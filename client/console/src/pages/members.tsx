import type { PageProps } from '../ui.tsx';

export function MembersPage(_props: PageProps) {
  return <h1>members</h1>;
}
