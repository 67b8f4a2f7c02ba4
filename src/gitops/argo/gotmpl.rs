//! The part of Go's `text/template` (with the sprig functions Argo CD adds,
//! applicationset/utils/utils.go) that ApplicationSets use: actions with `{{-`/`-}}` trimming
//! and comments, pipelines, fields (`.path.basename`, `$.x`), variables, literals, `if`/`else
//! if`/`else`, `range`, `with`, and the functions listed in [`call`]. Anything else is an error
//! naming what is not supported, never a silent wrong answer.

use crate::yaml::{Map, Node};

/// Renders `text` with `data` (the generator's parameters). `missing_error` is the
/// `missingkey=error` option.
pub(crate) fn render(text: &str, data: &Node, missing_error: bool) -> Result<String, String> {
    let tokens = lex(text)?;
    let mut pos = 0;
    let body = parse_list(&tokens, &mut pos, &[])?;
    if pos != tokens.len() {
        return Err(format!("unexpected {}", describe(&tokens[pos])));
    }
    let mut st = State {
        root: data.clone(),
        vars: vec![("$".into(), Some(data.clone()))],
        missing_error,
    };
    let mut out = String::new();
    exec(&body, &mut st, Some(data.clone()), &mut out)?;
    Ok(out)
}

#[derive(Clone, Debug)]
enum Tok {
    Text(String),
    Action(String),
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Text(_) => "text".into(),
        Tok::Action(a) => format!("{{{{{a}}}}}"),
    }
}

/// Splits the text into literal text and action bodies, applying the trim markers.
fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut trim_next = false;
    while let Some(start) = rest.find("{{") {
        let mut lit = &rest[..start];
        if trim_next {
            lit = lit.trim_start();
        }
        let after = &rest[start + 2..];
        let trim_before =
            after.starts_with("- ") || after.starts_with("-\t") || after.starts_with("-\n");
        if trim_before {
            lit = lit.trim_end();
        }
        if !lit.is_empty() {
            out.push(Tok::Text(lit.to_string()));
        }
        let body_start = if trim_before { 1 } else { 0 };
        let end = find_close(after).ok_or("unclosed action")?;
        let mut body = &after[body_start..end];
        trim_next = false;
        if body.ends_with(" -") || body.ends_with("\t-") || body.ends_with("\n-") {
            body = &body[..body.len() - 1];
            trim_next = true;
        }
        let body = body.trim();
        if !(body.starts_with("/*") && body.ends_with("*/")) {
            out.push(Tok::Action(body.to_string()));
        }
        rest = &after[end + 2..];
    }
    let mut lit = rest;
    if trim_next {
        lit = lit.trim_start();
    }
    if !lit.is_empty() {
        out.push(Tok::Text(lit.to_string()));
    }
    Ok(out)
}

/// The end of an action (`}}` outside string literals).
fn find_close(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        match quote {
            Some(q) => {
                if b[i] == b'\\' && q == b'"' {
                    i += 1;
                } else if b[i] == q {
                    quote = None;
                }
            }
            None => {
                if b[i] == b'"' || b[i] == b'`' {
                    quote = Some(b[i]);
                } else if b[i] == b'}' && b.get(i + 1) == Some(&b'}') {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

#[derive(Clone, Debug)]
enum Item {
    Text(String),
    Print(Pipe),
    If(Vec<(Pipe, Vec<Item>)>, Vec<Item>),
    Range(Pipe, Vec<Item>, Vec<Item>),
    With(Pipe, Vec<Item>, Vec<Item>),
}

/// A pipeline, with the variables it declares (`$x :=`, `$i, $v :=`).
#[derive(Clone, Debug)]
struct Pipe {
    decl: Vec<String>,
    assign: bool,
    cmds: Vec<Vec<Arg>>,
}

#[derive(Clone, Debug)]
enum Arg {
    Field(Option<String>, Vec<String>),
    Str(String),
    Int(i128),
    Float(f64),
    Bool(bool),
    Nil,
    Ident(String),
    Sub(Pipe),
}

/// Items until an action whose keyword is in `stops` (left unconsumed).
fn parse_list(toks: &[Tok], pos: &mut usize, stops: &[&str]) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    while *pos < toks.len() {
        match &toks[*pos] {
            Tok::Text(t) => {
                items.push(Item::Text(t.clone()));
                *pos += 1;
            }
            Tok::Action(a) => {
                let kw = a.split_whitespace().next().unwrap_or("");
                if stops.contains(&kw) {
                    return Ok(items);
                }
                *pos += 1;
                items.push(parse_action(a, kw, toks, pos)?);
            }
        }
    }
    if stops.is_empty() {
        Ok(items)
    } else {
        Err("unexpected EOF: an {{if}}, {{range}} or {{with}} has no {{end}}".into())
    }
}

fn parse_action(a: &str, kw: &str, toks: &[Tok], pos: &mut usize) -> Result<Item, String> {
    let rest = a[kw.len()..].trim();
    match kw {
        "if" => {
            let mut branches = vec![(parse_pipe(rest)?, parse_list(toks, pos, &["else", "end"])?)];
            loop {
                let Some(Tok::Action(stop)) = toks.get(*pos) else {
                    return Err("{{if}} without {{end}}".into());
                };
                *pos += 1;
                if stop == "end" {
                    return Ok(Item::If(branches, Vec::new()));
                }
                let cond = stop["else".len()..].trim();
                if let Some(c) = cond.strip_prefix("if ") {
                    branches.push((
                        parse_pipe(c.trim())?,
                        parse_list(toks, pos, &["else", "end"])?,
                    ));
                    continue;
                }
                let otherwise = parse_list(toks, pos, &["end"])?;
                *pos += 1;
                return Ok(Item::If(branches, otherwise));
            }
        }
        "range" | "with" => {
            let pipe = parse_pipe(rest)?;
            let body = parse_list(toks, pos, &["else", "end"])?;
            let Some(Tok::Action(stop)) = toks.get(*pos) else {
                return Err(format!("{{{{{kw}}}}} without {{{{end}}}}"));
            };
            *pos += 1;
            let otherwise = if stop.starts_with("else") {
                let o = parse_list(toks, pos, &["end"])?;
                *pos += 1;
                o
            } else {
                Vec::new()
            };
            Ok(if kw == "range" {
                Item::Range(pipe, body, otherwise)
            } else {
                Item::With(pipe, body, otherwise)
            })
        }
        "end" | "else" => Err(format!("unexpected {{{{{kw}}}}}")),
        "define" | "template" | "block" | "break" | "continue" => Err(format!(
            "{{{{{kw}}}}} is not supported by ply's Go template subset"
        )),
        _ => Ok(Item::Print(parse_pipe(a)?)),
    }
}

/// Words of an action: literals, fields, identifiers, `|`, `(`…`)` groups, `:=`, `=`, `,`.
fn words(s: &str) -> Result<Vec<String>, String> {
    let b: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '"' || c == '`' {
            let mut j = i + 1;
            while j < b.len() && b[j] != c {
                if c == '"' && b[j] == '\\' {
                    j += 1;
                }
                j += 1;
            }
            if j >= b.len() {
                return Err("unterminated string".into());
            }
            out.push(b[i..=j].iter().collect());
            i = j + 1;
            continue;
        }
        if c == '(' {
            let mut depth = 0;
            let mut j = i;
            let mut quote: Option<char> = None;
            while j < b.len() {
                match (quote, b[j]) {
                    (Some(q), ch) if ch == q => quote = None,
                    (Some(_), '\\') => j += 1,
                    (Some(_), _) => {}
                    (None, '"') | (None, '`') => quote = Some(b[j]),
                    (None, '(') => depth += 1,
                    (None, ')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            if j >= b.len() {
                return Err("unclosed left paren".into());
            }
            out.push(b[i..=j].iter().collect());
            i = j + 1;
            continue;
        }
        if c == '|' || c == ',' {
            out.push(c.to_string());
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && !b[j].is_whitespace() && !matches!(b[j], '|' | '(' | ')' | ',') {
            j += 1;
        }
        out.push(b[i..j].iter().collect());
        i = j;
    }
    Ok(out)
}

fn parse_pipe(s: &str) -> Result<Pipe, String> {
    let mut w = words(s)?;
    let mut decl = Vec::new();
    let mut assign = false;
    if let Some(k) = w.iter().position(|x| x == ":=" || x == "=")
        && w[..k].iter().all(|x| x.starts_with('$') || x == ",")
    {
        assign = w[k] == "=";
        decl = w[..k].iter().filter(|x| *x != ",").cloned().collect();
        w.drain(..=k);
    }
    let mut cmds = Vec::new();
    for part in w.split(|x| x == "|") {
        if part.is_empty() {
            return Err("missing command in pipeline".into());
        }
        cmds.push(
            part.iter()
                .map(|x| parse_arg(x))
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    if cmds.is_empty() {
        return Err("missing value for command".into());
    }
    Ok(Pipe { decl, assign, cmds })
}

fn parse_arg(w: &str) -> Result<Arg, String> {
    if let Some(inner) = w.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
        return Ok(Arg::Sub(parse_pipe(inner)?));
    }
    if w.starts_with('"') {
        return unquote(w).map(Arg::Str);
    }
    if let Some(raw) = w.strip_prefix('`').and_then(|x| x.strip_suffix('`')) {
        return Ok(Arg::Str(raw.to_string()));
    }
    if w == "." {
        return Ok(Arg::Field(None, Vec::new()));
    }
    if let Some(path) = w.strip_prefix('.') {
        return Ok(Arg::Field(
            None,
            path.split('.').map(str::to_string).collect(),
        ));
    }
    if w.starts_with('$') {
        let mut parts = w.split('.');
        let var = parts.next().unwrap_or("$").to_string();
        return Ok(Arg::Field(Some(var), parts.map(str::to_string).collect()));
    }
    match w {
        "true" => return Ok(Arg::Bool(true)),
        "false" => return Ok(Arg::Bool(false)),
        "nil" => return Ok(Arg::Nil),
        _ => {}
    }
    if w.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
        if let Ok(i) = w.parse::<i128>() {
            return Ok(Arg::Int(i));
        }
        if let Ok(f) = w.parse::<f64>() {
            return Ok(Arg::Float(f));
        }
    }
    if w.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Ok(Arg::Ident(w.to_string()));
    }
    Err(format!("bad word in an action: {w}"))
}

fn unquote(w: &str) -> Result<String, String> {
    let inner = &w[1..w.len() - 1];
    let mut out = String::new();
    let mut it = inner.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(o) => return Err(format!("unsupported escape \\{o} in a string literal")),
            None => return Err("bad string literal".into()),
        }
    }
    Ok(out)
}

struct State {
    root: Node,
    vars: Vec<(String, Option<Node>)>,
    missing_error: bool,
}

type Val = Option<Node>;

fn exec(items: &[Item], st: &mut State, dot: Val, out: &mut String) -> Result<(), String> {
    for item in items {
        match item {
            Item::Text(t) => out.push_str(t),
            Item::Print(p) => {
                let v = eval_pipe(p, st, &dot)?;
                if p.decl.is_empty() {
                    out.push_str(&print(&v));
                }
            }
            Item::If(branches, otherwise) => {
                let mark = st.vars.len();
                let mut done = false;
                for (cond, body) in branches {
                    if truthy(&eval_pipe(cond, st, &dot)?) {
                        exec(body, st, dot.clone(), out)?;
                        done = true;
                        break;
                    }
                }
                if !done {
                    exec(otherwise, st, dot.clone(), out)?;
                }
                st.vars.truncate(mark);
            }
            Item::With(p, body, otherwise) => {
                let mark = st.vars.len();
                let v = eval_pipe(p, st, &dot)?;
                if truthy(&v) {
                    exec(body, st, v, out)?;
                } else {
                    exec(otherwise, st, dot.clone(), out)?;
                }
                st.vars.truncate(mark);
            }
            Item::Range(p, body, otherwise) => range(p, body, otherwise, st, &dot, out)?,
        }
    }
    Ok(())
}

fn range(
    p: &Pipe,
    body: &[Item],
    otherwise: &[Item],
    st: &mut State,
    dot: &Val,
    out: &mut String,
) -> Result<(), String> {
    let mark = st.vars.len();
    let plain = Pipe {
        decl: Vec::new(),
        assign: false,
        cmds: p.cmds.clone(),
    };
    let v = eval_pipe(&plain, st, dot)?;
    let pairs: Vec<(Node, Node)> = match v.as_ref().map(Node::unspelled) {
        Some(Node::Seq(s)) => s
            .iter()
            .enumerate()
            .map(|(i, n)| (Node::Int(i as i128), n.clone()))
            .collect(),
        Some(Node::Map(m)) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            keys.into_iter()
                .map(|k| (Node::str(k.clone()), m.get(k).cloned().unwrap_or_default()))
                .collect()
        }
        Some(Node::Int(n)) => (0..*n).map(|i| (Node::Int(i), Node::Int(i))).collect(),
        None | Some(Node::Null) => Vec::new(),
        Some(other) => {
            return Err(format!(
                "range can't iterate over {}",
                print(&Some(other.clone()))
            ));
        }
    };
    if pairs.is_empty() {
        exec(otherwise, st, dot.clone(), out)?;
    }
    for (k, v) in pairs {
        match p.decl.as_slice() {
            [] => {}
            [one] => st.vars.push((one.clone(), Some(v.clone()))),
            [a, b, ..] => {
                st.vars.push((a.clone(), Some(k)));
                st.vars.push((b.clone(), Some(v.clone())));
            }
        }
        exec(body, st, Some(v), out)?;
        st.vars.truncate(mark);
    }
    Ok(())
}

fn eval_pipe(p: &Pipe, st: &mut State, dot: &Val) -> Result<Val, String> {
    let mut last: Option<Val> = None;
    for cmd in &p.cmds {
        last = Some(eval_cmd(cmd, st, dot, last)?);
    }
    let v = last.unwrap_or(None);
    if p.assign {
        for name in &p.decl {
            match st.vars.iter_mut().rev().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = v.clone(),
                None => return Err(format!("undefined variable: {name}")),
            }
        }
    } else {
        for name in &p.decl {
            st.vars.push((name.clone(), v.clone()));
        }
    }
    Ok(v)
}

fn eval_cmd(cmd: &[Arg], st: &mut State, dot: &Val, piped: Option<Val>) -> Result<Val, String> {
    match &cmd[0] {
        Arg::Ident(name) => {
            let mut args = Vec::new();
            for a in &cmd[1..] {
                args.push(eval_arg(a, st, dot)?);
            }
            if let Some(p) = piped {
                args.push(p);
            }
            call(name, args)
        }
        first => {
            if cmd.len() > 1 || piped.is_some() {
                return Err(format!(
                    "can't give arguments to a non-function {}",
                    show_arg(first)
                ));
            }
            eval_arg(first, st, dot)
        }
    }
}

fn show_arg(a: &Arg) -> String {
    match a {
        Arg::Field(v, p) => format!("{}.{}", v.clone().unwrap_or_default(), p.join(".")),
        other => format!("{other:?}"),
    }
}

fn eval_arg(a: &Arg, st: &mut State, dot: &Val) -> Result<Val, String> {
    Ok(match a {
        Arg::Str(s) => Some(Node::str(s.clone())),
        Arg::Int(i) => Some(Node::Int(*i)),
        Arg::Float(f) => Some(Node::Float(*f)),
        Arg::Bool(b) => Some(Node::Bool(*b)),
        Arg::Nil => None,
        Arg::Sub(p) => eval_pipe(p, st, dot)?,
        Arg::Ident(name) => call(name, Vec::new())?,
        Arg::Field(var, path) => {
            let start = match var {
                None => dot.clone(),
                Some(v) if v == "$" => Some(st.root.clone()),
                Some(v) => st
                    .vars
                    .iter()
                    .rev()
                    .find(|(n, _)| n == v)
                    .map(|(_, val)| val.clone())
                    .ok_or_else(|| format!("undefined variable: {v}"))?,
            };
            walk(start, path, st.missing_error)?
        }
    })
}

fn walk(mut cur: Val, path: &[String], missing_error: bool) -> Result<Val, String> {
    for key in path {
        cur = match cur.as_ref().map(Node::unspelled) {
            Some(Node::Map(m)) => match m.get(key) {
                Some(v) => Some(v.clone()),
                None if missing_error => return Err(format!("map has no entry for key \"{key}\"")),
                None => None,
            },
            None | Some(Node::Null) => {
                return Err(format!("nil pointer evaluating interface {{}}.{key}"));
            }
            Some(other) => {
                return Err(format!(
                    "can't evaluate field {key} in type {}",
                    other.kind_name()
                ));
            }
        };
    }
    Ok(cur)
}

/// Go's truth: false, 0, nil, empty string, list or map are false.
fn truthy(v: &Val) -> bool {
    match v.as_ref().map(Node::unspelled) {
        None | Some(Node::Null) => false,
        Some(Node::Bool(b)) => *b,
        Some(Node::Int(i)) => *i != 0,
        Some(Node::Float(f)) => *f != 0.0,
        Some(Node::Str(s)) => !s.is_empty(),
        Some(Node::Seq(s)) => !s.is_empty(),
        Some(Node::Map(m)) => !m.is_empty(),
        Some(Node::Spelled(_)) => true,
    }
}

/// `fmt.Print` of a value (`%v`), `<no value>` for a missing one.
fn print(v: &Val) -> String {
    match v {
        None => "<no value>".into(),
        Some(n) => text_of(n),
    }
}

fn text_of(n: &Node) -> String {
    match n.unspelled() {
        Node::Null => "<nil>".into(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Float(f) => crate::yaml::json::go_float(*f),
        Node::Str(s) => s.clone(),
        Node::Seq(s) => format!("[{}]", s.iter().map(text_of).collect::<Vec<_>>().join(" ")),
        Node::Map(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", m.get(k).map(text_of).unwrap_or_default()))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
        Node::Spelled(s) => s.text.clone(),
    }
}

fn s(v: &Val) -> String {
    match v {
        None => String::new(),
        Some(n) => text_of(n),
    }
}

fn int_of(v: &Val) -> Result<i128, String> {
    match v.as_ref().map(Node::unspelled) {
        Some(Node::Int(i)) => Ok(*i),
        Some(Node::Float(f)) => Ok(*f as i128),
        Some(Node::Str(t)) => t.parse().map_err(|_| format!("not a number: {t}")),
        None | Some(Node::Null) => Ok(0),
        Some(o) => Err(format!("not a number: {}", text_of(o))),
    }
}

fn eq(a: &Val, b: &Val) -> bool {
    match (
        a.as_ref().map(Node::unspelled),
        b.as_ref().map(Node::unspelled),
    ) {
        (Some(Node::Int(x)), Some(Node::Float(y))) | (Some(Node::Float(y)), Some(Node::Int(x))) => {
            (*x as f64) == *y
        }
        (Some(x), Some(y)) => {
            text_of(x) == text_of(y) && std::mem::discriminant(x) == std::mem::discriminant(y)
        }
        (None, None) => true,
        _ => false,
    }
}

fn need(name: &str, args: &[Val], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ))
    }
}

/// The functions: Go's builtins and the sprig functions ApplicationSets use, each family in
/// its own function.
fn call(name: &str, a: Vec<Val>) -> Result<Val, String> {
    match name {
        "and" | "or" | "not" | "eq" | "ne" | "lt" | "le" | "gt" | "ge" => logic(name, &a),
        "len" | "index" | "list" | "dict" | "get" | "hasKey" | "first" | "last" => {
            collection(name, a)
        }
        "print" | "println" | "printf" | "default" | "empty" | "coalesce" | "ternary" => {
            values(name, &a)
        }
        "lower" | "upper" | "title" | "trim" | "quote" | "squote" | "toString" | "normalize"
        | "nospace" | "base" | "dir" | "toJson" | "toYaml" | "b64enc" => one_string(name, &a),
        "trimPrefix" | "trimSuffix" | "trimAll" | "contains" | "hasPrefix" | "hasSuffix"
        | "repeat" | "trunc" | "split" | "splitList" | "join" | "cat" => two_arg(name, &a),
        "replace" => {
            need(name, &a, 3)?;
            Ok(Some(Node::str(s(&a[2]).replace(&s(&a[0]), &s(&a[1])))))
        }
        "substr" => {
            need(name, &a, 3)?;
            let x: Vec<char> = s(&a[2]).chars().collect();
            let (lo, hi) = (int_of(&a[0])?.max(0) as usize, int_of(&a[1])?);
            let hi = if hi < 0 || hi as usize > x.len() {
                x.len()
            } else {
                hi as usize
            };
            Ok(Some(Node::str(
                x.get(lo.min(hi)..hi)
                    .unwrap_or(&[])
                    .iter()
                    .collect::<String>(),
            )))
        }
        "add" | "sub" | "mul" | "div" | "mod" | "add1" => arith(name, &a),
        "env" | "expandenv" | "getHostByName" => Err(format!("function \"{name}\" not defined")),
        _ => Err(format!(
            "function \"{name}\" is not supported by ply's Go template subset (docs/gitops.md lists the supported ones)"
        )),
    }
}

/// Go's `and`, `or`, `not` and comparisons.
fn logic(name: &str, a: &[Val]) -> Result<Val, String> {
    match name {
        "and" => Ok(a
            .iter()
            .find(|v| !truthy(v))
            .or(a.last())
            .cloned()
            .flatten()),
        "or" => Ok(a.iter().find(|v| truthy(v)).or(a.last()).cloned().flatten()),
        "not" => {
            need(name, a, 1)?;
            Ok(Some(Node::Bool(!truthy(&a[0]))))
        }
        "eq" => Ok(Some(Node::Bool(
            a.len() >= 2 && a[1..].iter().any(|b| eq(&a[0], b)),
        ))),
        "ne" => {
            need(name, a, 2)?;
            Ok(Some(Node::Bool(!eq(&a[0], &a[1]))))
        }
        _ => {
            need(name, a, 2)?;
            let ord = match (int_of(&a[0]), int_of(&a[1])) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => s(&a[0]).cmp(&s(&a[1])),
            };
            use std::cmp::Ordering::*;
            let r = match name {
                "lt" => ord == Less,
                "le" => ord != Greater,
                "gt" => ord == Greater,
                _ => ord != Less,
            };
            Ok(Some(Node::Bool(r)))
        }
    }
}

/// Go's `len` and `index`, sprig's `list`, `dict`, `get`, `hasKey`, `first`, `last`.
fn collection(name: &str, a: Vec<Val>) -> Result<Val, String> {
    match name {
        "len" => {
            need(name, &a, 1)?;
            let n = match a[0].as_ref().map(Node::unspelled) {
                Some(Node::Str(x)) => x.len(),
                Some(Node::Seq(x)) => x.len(),
                Some(Node::Map(x)) => x.len(),
                _ => return Err("len of a value that has none".into()),
            };
            Ok(Some(Node::Int(n as i128)))
        }
        "index" => index(&a),
        "list" => Ok(Some(Node::Seq(
            a.into_iter().map(|v| v.unwrap_or(Node::Null)).collect(),
        ))),
        "dict" => {
            let mut m = Map::new();
            for pair in a.chunks(2) {
                m.insert(
                    s(&pair[0]),
                    pair.get(1).cloned().flatten().unwrap_or(Node::Null),
                );
            }
            Ok(Some(Node::Map(m)))
        }
        "get" => {
            need(name, &a, 2)?;
            Ok(Some(
                a[0].as_ref()
                    .and_then(|m| m.get(&s(&a[1])).cloned())
                    .unwrap_or(Node::str("")),
            ))
        }
        "hasKey" => {
            need(name, &a, 2)?;
            Ok(Some(Node::Bool(
                a[0].as_ref().and_then(|m| m.get(&s(&a[1]))).is_some(),
            )))
        }
        _ => {
            need(name, &a, 1)?;
            let seq = a[0]
                .as_ref()
                .and_then(Node::as_seq)
                .cloned()
                .unwrap_or_default();
            Ok(if name == "first" {
                seq.first().cloned()
            } else {
                seq.last().cloned()
            })
        }
    }
}

/// Go's `index`: each key or position in turn.
fn index(a: &[Val]) -> Result<Val, String> {
    let mut cur = a.first().cloned().flatten();
    for k in a.iter().skip(1) {
        cur = match (
            cur.as_ref().map(Node::unspelled),
            k.as_ref().map(Node::unspelled),
        ) {
            (Some(Node::Seq(s)), _) => {
                let i = int_of(k)?;
                Some(
                    s.get(usize::try_from(i).map_err(|_| "index out of range")?)
                        .cloned()
                        .ok_or(format!("index out of range: {i}"))?,
                )
            }
            (Some(Node::Map(m)), _) => m.get(&s(k)).cloned(),
            (None | Some(Node::Null), _) => None,
            _ => return Err("can't index item".into()),
        };
    }
    Ok(cur)
}

/// Go's `print`, `println`, `printf`; sprig's `default`, `empty`, `coalesce`, `ternary`.
fn values(name: &str, a: &[Val]) -> Result<Val, String> {
    let str_val = |x: String| Ok(Some(Node::str(x)));
    match name {
        "print" => str_val(a.iter().map(print).collect::<Vec<_>>().join("")),
        "println" => str_val(a.iter().map(print).collect::<Vec<_>>().join(" ") + "\n"),
        "printf" => {
            let (f, rest) = a.split_first().ok_or("printf needs a format")?;
            str_val(printf(&s(f), rest)?)
        }
        "default" => {
            need(name, a, 2)?;
            Ok(if truthy(&a[1]) {
                a[1].clone()
            } else {
                a[0].clone()
            })
        }
        "empty" => Ok(Some(Node::Bool(!truthy(&a.first().cloned().flatten())))),
        "coalesce" => Ok(a.iter().find(|v| truthy(v)).cloned().flatten()),
        _ => {
            need(name, a, 3)?;
            Ok(if truthy(&a[2]) {
                a[0].clone()
            } else {
                a[1].clone()
            })
        }
    }
}

/// The sprig functions of one string (the last argument, as a pipeline passes it).
fn one_string(name: &str, a: &[Val]) -> Result<Val, String> {
    let x = s(a.last().ok_or(format!("{name} needs an argument"))?);
    let v = a.last().cloned().flatten();
    Ok(Some(Node::str(match name {
        "lower" => x.to_lowercase(),
        "upper" => x.to_uppercase(),
        "title" => title(&x),
        "trim" => x.trim().to_string(),
        "quote" => format!("{:?}", x),
        "squote" => format!("'{x}'"),
        "toString" => x,
        "normalize" => sanitize_name(&x),
        "nospace" => x.chars().filter(|c| !c.is_whitespace()).collect(),
        "base" => x.rsplit('/').next().unwrap_or("").to_string(),
        "dir" => match x.rfind('/') {
            Some(0) => "/".into(),
            Some(i) => x[..i].to_string(),
            None => ".".into(),
        },
        "toJson" => crate::yaml::json::to_json(
            &v.unwrap_or(Node::Null),
            crate::yaml::json::JsonStyle::KUSTOMIZE_HASH,
        ),
        "toYaml" => {
            let mut out = String::new();
            crate::yaml::emit_document(
                &mut out,
                &v.unwrap_or(Node::Null),
                crate::yaml::EmitOptions::default(),
            );
            out.trim_end_matches('\n').to_string()
        }
        _ => base64(x.as_bytes()),
    })))
}

fn two_arg(name: &str, a: &[Val]) -> Result<Val, String> {
    if name == "cat" {
        let parts: Vec<String> = a.iter().filter(|v| v.is_some()).map(s).collect();
        return Ok(Some(Node::str(parts.join(" "))));
    }
    need(name, a, 2)?;
    let (x, y) = (s(&a[0]), s(&a[1]));
    let b = |v| Ok(Some(Node::Bool(v)));
    match name {
        "trimPrefix" => Ok(Some(Node::str(y.strip_prefix(x.as_str()).unwrap_or(&y)))),
        "trimSuffix" => Ok(Some(Node::str(y.strip_suffix(x.as_str()).unwrap_or(&y)))),
        "trimAll" => Ok(Some(Node::str(y.trim_matches(|c| x.contains(c))))),
        "contains" => b(y.contains(x.as_str())),
        "hasPrefix" => b(y.starts_with(x.as_str())),
        "hasSuffix" => b(y.ends_with(x.as_str())),
        "repeat" => Ok(Some(Node::str(
            y.repeat(usize::try_from(int_of(&a[0])?).unwrap_or(0)),
        ))),
        "trunc" => {
            let n = int_of(&a[0])?;
            let c: Vec<char> = y.chars().collect();
            let out: String = if n >= 0 {
                c.iter().take(n as usize).collect()
            } else {
                c[c.len().saturating_sub(n.unsigned_abs() as usize)..]
                    .iter()
                    .collect()
            };
            Ok(Some(Node::str(out)))
        }
        "split" => {
            let mut m = Map::new();
            for (i, part) in y.split(x.as_str()).enumerate() {
                m.insert(format!("_{i}"), Node::str(part));
            }
            Ok(Some(Node::Map(m)))
        }
        "splitList" => Ok(Some(Node::Seq(
            y.split(x.as_str()).map(Node::str).collect(),
        ))),
        _ => {
            let items: Vec<String> = match a[1].as_ref().map(Node::unspelled) {
                Some(Node::Seq(s)) => s.iter().map(text_of).collect(),
                _ => vec![y],
            };
            Ok(Some(Node::str(items.join(&x))))
        }
    }
}

fn arith(name: &str, a: &[Val]) -> Result<Val, String> {
    if name == "add1" {
        need(name, a, 1)?;
        return Ok(Some(Node::Int(int_of(&a[0])? + 1)));
    }
    let nums: Vec<i128> = a.iter().map(int_of).collect::<Result<_, _>>()?;
    let (first, rest) = nums
        .split_first()
        .ok_or(format!("{name} needs arguments"))?;
    let mut acc = *first;
    for n in rest {
        acc = match name {
            "add" => acc + n,
            "sub" => acc - n,
            "mul" => acc * n,
            "div" if *n != 0 => acc / n,
            "mod" if *n != 0 => acc % n,
            _ => return Err("integer divide by zero".into()),
        };
    }
    Ok(Some(Node::Int(acc)))
}

fn printf(f: &str, args: &[Val]) -> Result<String, String> {
    let mut out = String::new();
    let mut it = f.chars().peekable();
    let mut next = args.iter();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('%') => out.push('%'),
            Some('s') | Some('v') | Some('d') => out.push_str(&match next.next() {
                Some(v) => print(v),
                None => "%!s(MISSING)".into(),
            }),
            Some('q') => out.push_str(&format!("{:?}", next.next().map(s).unwrap_or_default())),
            Some(o) => {
                return Err(format!(
                    "printf verb %{o} is not supported by ply's Go template subset"
                ));
            }
            None => out.push_str("%!(NOVERB)"),
        }
    }
    Ok(out)
}

fn title(x: &str) -> String {
    let mut out = String::new();
    let mut start = true;
    for c in x.chars() {
        if start {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        // `strings.Title`: a word starts after anything but a letter, a digit or `_`.
        start = !(c.is_alphanumeric() || c == '_');
    }
    out
}

/// `utils.SanitizeName`: lower case, anything but `[-a-z0-9.]` → `-`, at most 253 bytes,
/// `-` and `.` trimmed at both ends.
pub(crate) fn sanitize_name(name: &str) -> String {
    let mut out: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.len() > 253 {
        let mut cut = 253;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out.trim_matches(|c| c == '-' || c == '.').to_string()
}

fn base64(b: &[u8]) -> String {
    const T: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, x)| acc | (u32::from(*x) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Node {
        crate::yaml::parse_documents(
            "path:\n  path: apps/web\n  basename: web\n  segments: [apps, web]\nenv: prod\nreplicas: 3\nflag: false\n",
        )
        .unwrap()
        .remove(0)
        .node
    }

    fn r(t: &str) -> String {
        render(t, &data(), false).unwrap()
    }

    #[test]
    fn fields_pipelines_and_functions() {
        assert_eq!(r("{{.path.basename}}-{{ .env | upper }}"), "web-PROD");
        assert_eq!(r("{{ index .path.segments 0 }}"), "apps");
        assert_eq!(r("{{ printf \"%s/%s\" .env .path.basename }}"), "prod/web");
        assert_eq!(r("{{ .missing }}"), "<no value>");
        assert_eq!(r("{{ default \"x\" .missing }}"), "x");
        assert_eq!(r("{{ .replicas }}"), "3");
        assert_eq!(r("{{ normalize \"My_App\" }}"), "my-app");
        assert_eq!(
            r("{{ .path.path | replace \"/\" \"-\" | trunc 6 }}"),
            "apps-w"
        );
    }

    #[test]
    fn control_structures_and_trimming() {
        assert_eq!(r("{{ if eq .env \"prod\" }}p{{ else }}o{{ end }}"), "p");
        assert_eq!(r("{{ if .flag }}a{{ else if .env }}b{{ end }}"), "b");
        assert_eq!(r("a  {{- .env -}}  b"), "aprodb");
        assert_eq!(
            r("{{ range $i, $s := .path.segments }}{{$i}}={{$s}};{{ end }}"),
            "0=apps;1=web;"
        );
        assert_eq!(r("{{ with .path }}{{ .basename }}{{ end }}"), "web");
        assert_eq!(r("{{/* comment */}}x"), "x");
        assert!(render("{{ .missing }}", &data(), true).is_err());
        assert!(render("{{ sha256sum .env }}", &data(), false).is_err());
        assert!(render("{{ if .env }}", &data(), false).is_err());
    }
}
