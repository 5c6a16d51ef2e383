/** A user of the API, their sessions (access tokens) and API keys, as the services see them. */
import type { MarginType, UserCategory } from '../ofs/offer/offer.js';
import type { BidderCategory } from '../ofs/rules.js';
import type { Member } from './member-data.js';

export interface User {
  userId: string;
  /** scrypt, in the format of src/auth/credentials.ts. */
  passwordHash: string;
  /** What an OFS issue of the one-listing model sees: RETAIL or NON_RETAIL. */
  category: BidderCategory;
  /** The operator's category (docs/design/ofs.md): RETAIL, NII, MF, IC or OTHS. */
  offerCategory: UserCategory;
  /** The margin an institution's offer bids take: H (100 %) or T (0 %). */
  marginType: MarginType;
  /** Base32 TOTP secret, or null when the user has no second factor. */
  totpSecret: string | null;
  /**
   * When the operator exempted the user from the second factor at login (LOGIN_SECOND_FACTOR_REQUIRED,
   * src/domain/access/second-factor.ts), or null: not exempt.
   */
  secondFactorExemptAt: number | null;
  createdAt: number;
}

/** A session (an access token, known by its hash) with its user's category. */
export interface Session {
  userId: string;
  category: BidderCategory;
  /** The user's member data, read with the session (each call reads it again: a change counts at the next call). */
  member: Member;
  expiresAt: number;
  revokedAt: number | null;
}

/** What is kept of an API key that may be shown: never the key, never its hash. */
export interface ApiKeyInfo {
  keyId: string;
  createdAt: number;
  revokedAt: number | null;
  /** The registered addresses (SEBI's static IP rule; none: none registered), and when they were set. */
  addresses: readonly string[];
  changedAt: number | null;
}
