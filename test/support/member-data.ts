/**
 * Member data for test users (docs/design/member-data.md): a UCC, a PAN and a custodian code made from the
 * user id, the same for the same id and, for all practical purposes, another for another id (each test
 * user its own client, its own PAN), so that their bids pass the member-data rule as real clients' do.
 */
import { createHash } from 'node:crypto';
import type { Member, MemberData } from '../../src/domain/access/member-data.js';
import type { UserCategory } from '../../src/domain/ofs/offer/offer.js';
import type { BidderCategory } from '../../src/domain/ofs/rules.js';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function testMemberData(userId: string): MemberData & { ucc: string; pan: string } {
  const digest = createHash('sha256').update(userId).digest();
  const hex = digest.toString('hex').toUpperCase();
  const letter = (i: number) => LETTERS[digest[i]! % 26]!;
  const digits = String(digest.readUInt32BE(8) % 10_000).padStart(4, '0');
  return {
    ucc: `T${hex.slice(0, 9)}`,
    // A person's PAN (fourth letter P).
    pan: `${letter(0)}${letter(1)}${letter(2)}P${letter(3)}${digits}${letter(4)}`,
    clientType: 'CLI',
    custodianCode: `C${hex.slice(10, 18)}`,
  };
}

/** What a session of a test user (testMemberData's) carries: its member data and its category. */
export function testMember(userId: string, category: UserCategory | BidderCategory = 'RETAIL'): Member {
  return { ...testMemberData(userId), category: category === 'NON_RETAIL' ? 'NII' : category };
}
