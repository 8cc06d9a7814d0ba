import type { PageProps } from '../ui.tsx';

export function AuditPage(_props: PageProps) {
  return <h1>audit</h1>;
}
