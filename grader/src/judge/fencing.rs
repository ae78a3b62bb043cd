//! The rule of the fencing exercise beyond taking the lock ([`super::acquire`]): the
//! newest grant carries the largest fencing token.

use super::Call;
use crate::verdict::{Property, Violation};

/// What the caller's fencing token is held against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against<'a> {
    /// The fence counter's value before the call.
    Counter(u64),
    /// An earlier grant, named as the report says it (`B's grant`, `an
    /// earlier grant`), and its token.
    EarlierGrant(&'a str, u64),
    /// A later grant, to another client, with its token.
    LaterGrant(&'a str, u64),
}

/// [`Property::TokensGrow`]: the caller's grant, with fencing token `token`,
/// is larger than every token handed out before it and smaller than every
/// one handed out after it.
pub fn tokens_grow(call: &Call<'_>, token: u64, against: Against<'_>) -> Option<Violation> {
    let name = call.name();
    let what = match against {
        Against::Counter(n) if token <= n => {
            format!("the fence counter stood at {n}, and {name} returned token {token}")
        }
        Against::EarlierGrant(grant, n) if token <= n => format!(
            "{name} was granted the lock after {grant} with token {n}, but returned token {token}: \
             the storage will refuse {}'s requests as stale",
            call.caller
        ),
        Against::LaterGrant(who, n) if token >= n => format!(
            "{name} returned token {token}, yet {who} was granted the lock after it with token {n}: \
             {}'s stale requests will be accepted and {who}'s refused",
            call.caller
        ),
        _ => return None,
    };
    Some(call.broke(Property::TokensGrow, what))
}
