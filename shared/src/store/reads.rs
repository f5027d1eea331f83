//! The read access patterns. Reads never guard a write: a write's own
//! conditions carry every invariant.

use crate::address_policy::CanonicalEmail;
use crate::domain::{Account, Email, EmailAddress, EmailId, ImportKey, Profile, Timestamp, UserId, UserStatus};
use crate::store::keys::{self, Item};

use super::expr::and;
use super::items::{self, ClaimItem, EmailItem, IndexedEmail, ProfileItem, UserItems};
use super::limits::{self, Counter, Seen};
use super::ops::visible;
use super::{Store, StoreError, query_all};

impl Store {
    /// The profile of a user; deleted users are not found.
    pub async fn get_profile(&self, user: &UserId) -> Result<Profile, StoreError> {
        let item = self.get(keys::profile_key(user)).await?;
        let profile: ProfileItem = item.map(items::from_item).transpose()?.ok_or(StoreError::NotFound)?;
        visible(profile).map(ProfileItem::into_domain)
    }

    /// The status of a user's profile, deleted ones included; `None` without a profile.
    pub async fn profile_status(&self, user: &UserId) -> Result<Option<UserStatus>, StoreError> {
        let item = self.get(keys::profile_key(user)).await?;
        Ok(item.map(items::from_item::<ProfileItem>).transpose()?.map(|p| p.status))
    }

    /// Whether `user` may sign in now, as post-authentication asks: the
    /// profile's status, and whether a recovery still holds sign-in (Cognito
    /// not yet settled). `None` without a profile.
    pub async fn sign_in_standing(&self, user: &UserId) -> Result<Option<(UserStatus, bool)>, StoreError> {
        let item = self.get(keys::profile_key(user)).await?;
        let profile = item.map(items::from_item::<ProfileItem>).transpose()?;
        Ok(profile.map(|p| (p.status, p.sign_in_held)))
    }

    /// A user's addresses, oldest first, read with the profile in one Query of
    /// the partition: a deleted user (whose token stays valid until it
    /// expires) is not found, and a session a recovery ended sees nothing.
    /// From `EMAIL#` on: the addresses, then `PROFILE`; the switches kept for
    /// their undoing (`CHANGE#`, sorted before) are not read.
    pub async fn list_emails(&self, user: &UserId) -> Result<Vec<Email>, StoreError> {
        let query = self
            .query(|x| {
                and([
                    x.eq(keys::PK, keys::user_pk(user)),
                    x.gt(keys::SK, keys::EMAIL_SK_PREFIX),
                ])
            })
            .consistent_read(true);
        let items = UserItems::from_items(query_all(&self.client, query).await?)?;
        visible(items.profile.ok_or(StoreError::NotFound)?)?;
        if items.emails.is_empty() {
            return Err(StoreError::NotFound);
        }
        Ok(items.emails.into_iter().map(EmailItem::into_domain).collect())
    }

    /// The profile and all addresses of a user, in one Query of its partition.
    pub async fn get_account(&self, user: &UserId) -> Result<Account, StoreError> {
        let items = self.user_items(user).await?;
        let profile = visible(items.profile.ok_or(StoreError::NotFound)?)?;
        Ok(Account {
            profile: profile.into_domain(),
            emails: items.emails.into_iter().map(EmailItem::into_domain).collect(),
        })
    }

    /// The account holding an address, through GSI1. GSI1 is eventually
    /// consistent: a change of owner shows there a moment later.
    pub async fn find_by_email(&self, email: &EmailAddress) -> Result<Account, StoreError> {
        let mut records: Vec<IndexedEmail> = Vec::new();
        // Every form while the table moves between policies; one otherwise.
        for form in self.policy.forms(email) {
            let query = self
                .query(|x| x.eq(keys::GSI1PK, keys::email_gsi1pk(&form)))
                .index_name(keys::GSI1);
            for item in query_all(&self.client, query).await? {
                records.push(items::from_item(item)?);
            }
        }
        // During a take-over the index may briefly list two holders: the verified one owns it.
        let owner = records
            .iter()
            .max_by_key(|r| (r.is_verified, r.created_at))
            .ok_or(StoreError::NotFound)?;
        self.get_account(&owner.user_id).await
    }

    /// Whether an address can be added: no claim, or an unverified one that has
    /// expired. A strongly consistent read.
    pub async fn is_available(&self, email: &EmailAddress, now: Timestamp) -> Result<bool, StoreError> {
        Ok(self.claims(email).await?.iter().all(|c| !c.is_live(now)))
    }

    /// The user who verified the address (its claim by any form), if anyone.
    /// Never a yes or no: whoever decides about a user from it must tell that
    /// user's own claim from another's. An unverified claim is nobody's here:
    /// it never blocks a sign-up (the confirmed sign-up takes it over), so no
    /// one can squat an address they cannot verify. A former primary reserved
    /// for its account's recovery is that account's until `now` passes the
    /// reservation, removed or added back unverified alike: the sign-up it
    /// blocks is another account's address ([`ClaimItem::is_owned`]).
    pub async fn verified_holder(&self, email: &EmailAddress, now: Timestamp) -> Result<Option<UserId>, StoreError> {
        Ok(self
            .claims(email)
            .await?
            .into_iter()
            .find(|c| c.is_owned(now))
            .map(|c| c.user_id))
    }

    /// The import key of a person whose primary address is `primary`.
    pub fn import_key(&self, primary: &EmailAddress) -> Result<ImportKey, StoreError> {
        Ok(self.key()?.import_key(primary))
    }

    /// Whether an account imported under `import_key` was erased since.
    pub async fn erased_import(&self, import_key: &ImportKey) -> Result<bool, StoreError> {
        Ok(self.get(keys::erased_import_key(import_key)).await?.is_some())
    }

    /// Every live claim on `email` (by any form): its holder, and whether
    /// the holder owns it, so that even a verified claimant cannot take it
    /// over: verified, or reserved for a recovery (an address added back
    /// unverified included). A lapsed unverified claim is nobody's.
    pub async fn claim_holders(&self, email: &EmailAddress, now: Timestamp) -> Result<Vec<(UserId, bool)>, StoreError> {
        Ok(self
            .claims(email)
            .await?
            .into_iter()
            .filter(|c| c.is_live(now))
            .map(|c| {
                let owned = c.is_owned(now);
                (c.user_id, owned)
            })
            .collect())
    }

    /// The user an import line describes, when an earlier run of it made
    /// them (they may have migrated, or changed their addresses since): the
    /// verified holder of the line's primary whose profile records the line's
    /// import key. A profile that records none (a sign-up, or an import from
    /// before keys were kept) is never taken for the line's person.
    pub async fn line_holder(
        &self,
        primary: &EmailAddress,
        import_key: &ImportKey,
    ) -> Result<Option<UserId>, StoreError> {
        let Some(holder) = self.verified_holder(primary, Timestamp::now()).await? else {
            return Ok(None);
        };
        let profile: Option<ProfileItem> = self
            .get(keys::profile_key(&holder))
            .await?
            .map(items::from_item)
            .transpose()?;
        let theirs =
            profile.is_some_and(|p| p.status != UserStatus::Deleted && p.import_key.as_ref() == Some(import_key));
        Ok(theirs.then_some(holder))
    }

    /// Whether the address is the one its verified owner signs in with in
    /// Cognito (as last recorded; the primary, on profiles from before that
    /// was kept): what a sign-up with it must be refused for, and what
    /// Cognito's own sign-up reveals anyway. A verified secondary address is
    /// not: refusing it before any proof would tell a stranger that some
    /// account holds it; the confirmation, once the mailbox is proved, does.
    pub async fn is_sign_in_address(&self, email: &EmailAddress) -> Result<bool, StoreError> {
        for claim in self.claims(email).await?.into_iter().filter(|c| c.expires_at.is_none()) {
            let profile: Option<ProfileItem> = self
                .get(keys::profile_key(&claim.user_id))
                .await?
                .map(items::from_item)
                .transpose()?;
            let signs_in_with = profile.and_then(|p| p.cognito_email.or(p.email));
            if signs_in_with.is_some_and(|address| self.policy.same(&address, email)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The claims on `email`: on its canonical form (every spelling of it),
    /// and while the table moves between policies, on its previous form.
    pub(crate) async fn claims(&self, email: &EmailAddress) -> Result<Vec<ClaimItem>, StoreError> {
        let mut claims = Vec::new();
        for form in self.policy.forms(email) {
            claims.extend(self.claim_on(&form).await?);
        }
        Ok(claims)
    }

    /// The claim on one form, if any: strongly consistent.
    pub(crate) async fn claim_on(&self, form: &CanonicalEmail) -> Result<Option<ClaimItem>, StoreError> {
        self.get(keys::claim_key(form)).await?.map(items::from_item).transpose()
    }

    /// Reads the counters a write will name, concurrently, before its first
    /// attempt: the attempt then pins the versions they have, instead of
    /// assuming them absent and losing a transaction to learn them. Nothing is
    /// guarded by this read; the write's own conditions still are.
    pub(crate) async fn read_counters(
        &self,
        seen: &mut Seen,
        wanted: impl IntoIterator<Item = (Counter, Item)>,
    ) -> Result<(), StoreError> {
        let (counters, reads): (Vec<Counter>, Vec<_>) = wanted
            .into_iter()
            .map(|(counter, key)| (counter, self.get(key)))
            .unzip();
        let items = futures::future::try_join_all(reads).await?;
        for (counter, item) in counters.into_iter().zip(items) {
            seen.learn(counter, limits::parse(item.as_ref())?);
        }
        Ok(())
    }

    /// One of the user's addresses. The profile is read beside it (two
    /// GetItems at once, one round trip): a session a recovery ended sees
    /// nothing, and a deleted user nothing either.
    pub async fn get_email(&self, user: &UserId, email_id: EmailId) -> Result<Email, StoreError> {
        let (record, profile) = tokio::join!(self.email_record(user, email_id), self.get(keys::profile_key(user)));
        let profile: Option<ProfileItem> = profile?.map(items::from_item).transpose()?;
        visible(profile.ok_or(StoreError::NotFound)?)?;
        Ok(record?.into_domain())
    }
}
