//! Spawn (PMI-1 `mcmd` spawn and PMI-2 `spawn`): the commands checked and handed to the host, its answer relayed.

#![forbid(unsafe_code)]

use super::{App, ConnId, Event, Output, Query, Refusal, Server, Waiter, WireKind, MAX_SPAWN_CMDS};

impl Server {
    pub(super) fn spawn_v1(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        // segments: fields up to each `endcmd`
        let bad = |d: String| Refusal::BadField {
            cmd: "spawn",
            detail: d,
        };
        let mut apps = Vec::new();
        let mut preput = Vec::new();
        let mut seg: Vec<(&str, &str)> = Vec::new();
        for (k, v) in &q.msg.pairs {
            if k == "endcmd" {
                let get = |key: &str| seg.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
                let num = |key: &str| -> Result<usize, Refusal> {
                    get(key)
                        .unwrap_or("0")
                        .parse()
                        .map_err(|_| bad(format!("{key} is not a number")))
                };
                let argc = num("argcnt")?.min(seg.len());
                let argv = (1..=argc)
                    .map(|i| get(&format!("arg{i}")).unwrap_or_default().to_string())
                    .collect();
                let infos = num("info_num")?.min(seg.len());
                let info = (0..infos)
                    .filter_map(|i| {
                        Some((
                            get(&format!("info_key_{i}"))?.to_string(),
                            get(&format!("info_val_{i}"))?.to_string(),
                        ))
                    })
                    .collect();
                let pre = num("preput_num")?.min(seg.len());
                for i in 0..pre {
                    if let (Some(a), Some(b)) = (
                        get(&format!("preput_key_{i}")),
                        get(&format!("preput_val_{i}")),
                    ) {
                        preput.push((a.to_string(), b.to_string()));
                    }
                }
                apps.push(App {
                    cmd: get("execname")
                        .ok_or_else(|| bad("no execname".into()))?
                        .to_string(),
                    argv,
                    maxprocs: num("nprocs")? as u32,
                    info,
                });
                if apps.len() > MAX_SPAWN_CMDS {
                    return Err(Refusal::Limit(format!(
                        "more than {MAX_SPAWN_CMDS} commands"
                    )));
                }
                seg.clear();
            } else if k != "mcmd" {
                seg.push((k, v));
            }
        }
        self.start_spawn(conn, q, apps, preput)
    }

    pub(super) fn spawn_v2(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let bad = |d: String| Refusal::BadField {
            cmd: "spawn",
            detail: d,
        };
        let mut preput = Vec::new();
        let mut segs: Vec<Vec<(&str, &str)>> = vec![Vec::new()];
        for (k, v) in &q.msg.pairs {
            if k == "subcmd" {
                if segs.len() > MAX_SPAWN_CMDS {
                    return Err(Refusal::Limit(format!(
                        "more than {MAX_SPAWN_CMDS} commands"
                    )));
                }
                segs.push(Vec::new());
            }
            if let Some(s) = segs.last_mut() {
                s.push((k, v));
            }
        }
        let head = &segs[0];
        let hget = |key: &str| head.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        let n: usize = hget("preputcount")
            .unwrap_or("0")
            .parse()
            .map_err(|_| bad("preputcount".into()))?;
        for i in 0..n.min(head.len()) {
            if let (Some(a), Some(b)) = (hget(&format!("ppkey{i}")), hget(&format!("ppval{i}"))) {
                preput.push((a.to_string(), b.to_string()));
            }
        }
        let mut apps = Vec::new();
        for seg in &segs[1..] {
            let get = |key: &str| seg.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
            let num = |key: &str| -> Result<usize, Refusal> {
                get(key)
                    .unwrap_or("0")
                    .parse()
                    .map_err(|_| bad(format!("{key} is not a number")))
            };
            let argv = (0..num("argc")?.min(seg.len()))
                .map(|i| get(&format!("argv{i}")).unwrap_or_default().to_string())
                .collect();
            let info = (0..num("infokeycount")?.min(seg.len()))
                .filter_map(|i| {
                    Some((
                        get(&format!("infokey{i}"))?.to_string(),
                        get(&format!("infoval{i}"))?.to_string(),
                    ))
                })
                .collect();
            apps.push(App {
                cmd: get("subcmd").unwrap_or_default().to_string(),
                argv,
                maxprocs: num("maxprocs")? as u32,
                info,
            });
        }
        self.start_spawn(conn, q, apps, preput)
    }

    pub(super) fn start_spawn(
        &mut self,
        conn: ConnId,
        q: &Query,
        apps: Vec<App>,
        preput: Vec<(String, String)>,
    ) -> Result<(), Refusal> {
        if apps.is_empty() || apps.iter().any(|a| a.cmd.is_empty() || a.maxprocs == 0) {
            return Err(Refusal::BadField {
                cmd: "spawn",
                detail: "a command without an executable or processes".into(),
            });
        }
        let (k, r) = self.who(conn);
        let request = self.next_request;
        self.next_request += 1;
        self.spawns.insert(
            request,
            (conn, q.wire, q.msg.get("thrid").map(str::to_string)),
        );
        self.out.push_back(Output::Host(Event::Spawn {
            request,
            kvsname: k,
            rank: r,
            apps,
            preput,
        }));
        Ok(())
    }

    /// The host's answer to [`Event::Spawn`]: started, or why not.
    pub fn spawned(&mut self, request: u64, result: Result<(), String>) {
        let Some((conn, wire, thrid)) = self.spawns.remove(&request) else {
            return;
        };
        let w = Waiter {
            conn,
            wire,
            resp: "",
            thrid,
            tag: None,
        };
        let resp = match wire {
            WireKind::V1 => "spawn_result",
            WireKind::V2 => "spawn-response",
        };
        match result {
            Ok(()) => self.send_to(&w, resp, &[("rc", "0")]),
            Err(e) => {
                tracing::warn!(target: "pmix_wire::pmi", conn, "spawn failed: {e}");
                self.send_to(&w, resp, &[("rc", "1"), (w.errkey(), &e)])
            }
        }
    }
}
