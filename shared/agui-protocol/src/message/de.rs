//! Reading [`Message`] and [`Content`] without serde's buffering.
//!
//! A derived internally tagged enum copies the whole object into an intermediate tree before
//! it knows which variant to build, and an untagged one does the same to try each variant:
//! for the short messages of a conversation that copying cost several times the parse. Here
//! a message is read member by member: the members before `role` (usually none: everything
//! Handoff writes puts it first; clients often send `id` first) are held aside as JSON
//! values, and the variant's own derived reader then takes those followed by the rest of
//! the object, straight from the input. Messages and errors match the derived ones (unknown
//! and misplaced members are ignored, `missing field `role``, `unknown variant ...`), and a
//! malformed member is now named by its own path (`messages[0].content`).

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{
    ActivityMessage, AssistantMessage, Content, ContentPart, Message, ROLES, ReasoningMessage,
    TextOnlyMessage, ToolMessage, UserMessage,
};

/// The `role` tag.
enum Role {
    Developer,
    System,
    Assistant,
    User,
    Tool,
    Activity,
    Reasoning,
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(RoleVisitor)
    }
}

struct RoleVisitor;

impl<'de> Visitor<'de> for RoleVisitor {
    type Value = Role;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message role")
    }

    fn visit_str<E: de::Error>(self, role: &str) -> Result<Role, E> {
        Ok(match role {
            "developer" => Role::Developer,
            "system" => Role::System,
            "assistant" => Role::Assistant,
            "user" => Role::User,
            "tool" => Role::Tool,
            "activity" => Role::Activity,
            "reasoning" => Role::Reasoning,
            other => return Err(de::Error::unknown_variant(other, &ROLES)),
        })
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MessageVisitor)
    }
}

struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object with a `role`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
        let mut before = Vec::new();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Role => {
                    let role: Role = map.next_value()?;
                    let rest = Chain {
                        before: before.into_iter(),
                        held: None,
                        rest: map,
                    };
                    return read_variant(role, MapAccessDeserializer::new(rest));
                }
                Key::Other(name) => before.push((name, map.next_value::<Value>()?)),
            }
        }
        Err(de::Error::missing_field("role"))
    }
}

fn read_variant<'de, D: Deserializer<'de>>(role: Role, fields: D) -> Result<Message, D::Error> {
    Ok(match role {
        Role::Developer => Message::Developer(TextOnlyMessage::deserialize(fields)?),
        Role::System => Message::System(TextOnlyMessage::deserialize(fields)?),
        Role::Assistant => Message::Assistant(AssistantMessage::deserialize(fields)?),
        Role::User => Message::User(UserMessage::deserialize(fields)?),
        Role::Tool => Message::Tool(ToolMessage::deserialize(fields)?),
        Role::Activity => Message::Activity(ActivityMessage::deserialize(fields)?),
        Role::Reasoning => Message::Reasoning(ReasoningMessage::deserialize(fields)?),
    })
}

/// A member name: `role`, or any other (kept, to be handed to the variant's reader).
enum Key {
    Role,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
        Ok(if name == "role" {
            Key::Role
        } else {
            Key::Other(name.to_owned())
        })
    }

    fn visit_string<E: de::Error>(self, name: String) -> Result<Key, E> {
        Ok(if name == "role" {
            Key::Role
        } else {
            Key::Other(name)
        })
    }
}

/// The members read before `role`, then the rest of the object.
struct Chain<A> {
    before: std::vec::IntoIter<(String, Value)>,
    /// The value of the held-aside member whose name was just handed out.
    held: Option<Value>,
    rest: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Chain<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.before.next() {
            Some((name, value)) => {
                self.held = Some(value);
                let name: StringDeserializer<A::Error> = name.into_deserializer();
                seed.deserialize(name).map(Some)
            }
            None => self.rest.next_key_seed(seed),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.held.take() {
            Some(value) => seed.deserialize(value).map_err(de::Error::custom),
            None => self.rest.next_value_seed(seed),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an array of content parts")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Content, E> {
        Ok(Content::Text(text.to_owned()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Content, E> {
        Ok(Content::Text(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, parts: A) -> Result<Content, A::Error> {
        Vec::<ContentPart>::deserialize(SeqAccessDeserializer::new(parts)).map(Content::Parts)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::super::{
        ActivityMessage, AssistantMessage, Content, ContentPart, Message, ReasoningMessage,
        TextOnlyMessage, ToolMessage, UserMessage,
    };

    /// What serde derives for the same shapes: the reference these readers must agree with.
    #[derive(Deserialize)]
    #[serde(tag = "role", rename_all = "lowercase")]
    enum Derived {
        Developer(TextOnlyMessage),
        System(TextOnlyMessage),
        Assistant(AssistantMessage),
        User(DerivedUser),
        Tool(ToolMessage),
        Activity(ActivityMessage),
        Reasoning(ReasoningMessage),
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct DerivedUser {
        id: String,
        content: DerivedContent,
        #[serde(default)]
        name: Option<String>,
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum DerivedContent {
        Text(String),
        Parts(Vec<ContentPart>),
    }

    fn derived(text: &str) -> Result<Message, serde_json::Error> {
        Ok(match serde_json::from_str::<Derived>(text)? {
            Derived::Developer(m) => Message::Developer(m),
            Derived::System(m) => Message::System(m),
            Derived::Assistant(m) => Message::Assistant(m),
            Derived::User(m) => Message::User(UserMessage {
                id: m.id.into(),
                content: match m.content {
                    DerivedContent::Text(t) => Content::Text(t),
                    DerivedContent::Parts(p) => Content::Parts(p),
                },
                name: m.name,
                encrypted_value: None,
                metadata: None,
                subagent_run_id: None,
            }),
            Derived::Tool(m) => Message::Tool(m),
            Derived::Activity(m) => Message::Activity(m),
            Derived::Reasoning(m) => Message::Reasoning(m),
        })
    }

    #[test]
    fn reads_what_the_derived_reader_reads_in_any_member_order() {
        let accepted = [
            r#"{"role":"user","id":"u","content":"hi"}"#,
            r#"{"id":"u","role":"user","content":"hi","name":"ann"}"#,
            r#"{"id":"u","content":"hi","role":"user","unknown":{"deep":[1,2]}}"#,
            r#"{"content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","value":"https://x/y.png"}}],"id":"u","role":"user"}"#,
            r#"{"role":"assistant","id":"a","content":null,"toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
            r#"{"id":"a","toolCalls":null,"role":"assistant","metadata":{"k":1}}"#,
            r#"{"role":"tool","id":"t","content":"{\"ok\":true}","toolCallId":"c","error":null}"#,
            r#"{"toolCallId":"c","id":"t","content":[{"type":"text","text":"x"}],"role":"tool"}"#,
            r#"{"role":"system","id":"s","content":"be brief","encryptedValue":"e"}"#,
            r#"{"id":"d","content":"dev","role":"developer","subagentRunId":"sr"}"#,
            r#"{"role":"activity","id":"p","activityType":"progress","content":{"pct":50}}"#,
            r#"{"content":"why","role":"reasoning","id":"r"}"#,
        ];
        for text in accepted {
            let ours: Message =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(Some(ours), derived(text).ok(), "{text}");
        }
    }

    #[test]
    fn refuses_what_the_derived_reader_refuses() {
        let refused = [
            (r#"{"id":"u","content":"hi"}"#, "missing field `role`"),
            (
                r#"{"role":"bot","id":"u","content":"hi"}"#,
                "unknown variant `bot`",
            ),
            (r#"{"id":"u","role":"user"}"#, "missing field `content`"),
            (r#"{"role":"user","id":"u","content":5}"#, "content parts"),
            (
                r#"{"content":{"a":1},"id":"u","role":"user"}"#,
                "content parts",
            ),
            (
                r#"{"role":"tool","id":"t","content":"x"}"#,
                "missing field `toolCallId`",
            ),
            (
                r#"{"role":"activity","id":"p","activityType":"x","content":"s"}"#,
                "map",
            ),
            (
                r#"{"role":7,"id":"u","content":"hi"}"#,
                "expected a message role",
            ),
        ];
        for (text, needle) in refused {
            let err = serde_json::from_str::<Message>(text)
                .expect_err(text)
                .to_string();
            assert!(err.contains(needle), "{text}: {err}");
            assert!(derived(text).is_err(), "{text}");
        }
        // serde's derived reader also takes `[role, fields...]`; AG-UI messages are objects.
        let err = serde_json::from_str::<Message>(r#"["user","u","hi"]"#).unwrap_err();
        assert!(err.to_string().contains("invalid type: sequence"), "{err}");
    }

    #[test]
    fn reads_from_a_json_value_too() {
        let value = serde_json::json!({"id": "u", "content": "hi", "role": "user"});
        let message: Message = serde_json::from_value(value).unwrap();
        assert_eq!(message, Message::user("u", "hi"));
    }
}
