/**
 * A worker's shares of some work at once (attempts, actors' rounds): at most `total`, and at most
 * `perOrganization` of one organization, so one organization's slow receivers hold only its share.
 */
export function organizationShares(total: number, perOrganization: number) {
  const held = new Map<string, number>();
  let all = 0;
  /** A share for the organization, or null when its share (or the whole) is taken; call the answer to give it back. */
  return (organization_id: string): (() => void) | null => {
    const mine = held.get(organization_id) ?? 0;
    if (all >= total || mine >= perOrganization) return null;
    held.set(organization_id, mine + 1);
    all += 1;
    return () => {
      all -= 1;
      const left = (held.get(organization_id) ?? 1) - 1;
      if (left) held.set(organization_id, left);
      else held.delete(organization_id);
    };
  };
}
