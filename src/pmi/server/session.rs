//! The connection's life: init and its version, naming a rank (initack, fullinit), the maxima and attributes a rank asks of itself, abort and finalize.

#![forbid(unsafe_code)]

use super::{int, ConnId, Event, Output, Query, Refusal, Server, MAX_KEY, MAX_KVSNAME, MAX_VALUE};

impl Server {
    pub(super) fn init(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let v = int(q, "init", "pmi_version")?;
        let s = int(q, "init", "pmi_subversion")?;
        let agreed = match (v, s) {
            (1, 0..=2) => (1, 2),
            (2, 0) => (2, 0),
            _ => {
                // answered like hydra's refusal, then closed
                let r = Refusal::Version(v, s);
                self.refuse(conn, q, "response_to_init", r);
                self.out.push_back(Output::Close(conn));
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.closed = true;
                }
                return Ok(());
            }
        };
        if let Some(c) = self.conns.get_mut(&conn) {
            c.version = Some(agreed);
        }
        let (a, b) = (agreed.0.to_string(), agreed.1.to_string());
        self.answer(conn, q, &[("pmi_version", &a), ("pmi_subversion", &b)])?;
        let (k, r) = self.who(conn);
        if self.jobs.contains_key(&k) && agreed.0 == 1 {
            self.out.push_back(Output::Host(Event::Initialized {
                kvsname: k,
                rank: r,
                version: agreed,
            }));
        }
        Ok(())
    }

    /// Name an anonymous connection (`PMI_PORT`) as rank `r` of `k`.
    pub(super) fn claim(&mut self, conn: ConnId, k: &str, r: u32) -> Result<(), Refusal> {
        let job = self
            .jobs
            .get_mut(k)
            .ok_or_else(|| Refusal::NoSuchRank(format!("{r} of {k}")))?;
        if r >= job.spec.size {
            return Err(Refusal::NoSuchRank(format!("{r} of {k}")));
        }
        if let Some(&other) = job.conns.get(&r) {
            if other != conn {
                return Err(Refusal::Taken(k.to_string(), r));
            }
        }
        job.conns.insert(r, conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.who = Some((k.to_string(), r));
            if let Some(at) = c.deadline.take() {
                self.unnamed.remove(at, conn);
            }
        }
        Ok(())
    }

    pub(super) fn initack(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let id = int(q, "initack", "pmiid")?;
        let (k, r) = u32::try_from(id)
            .ok()
            .and_then(|i| self.ids.get(&i).cloned())
            .ok_or_else(|| Refusal::NoSuchRank(format!("pmiid {id}")))?;
        self.claim(conn, &k, r)?;
        let size = self.jobs[&k].spec.size.to_string();
        // the answer, then three `set` lines (MPICH's v1-initack wire)
        self.answer(conn, q, &[])?;
        let w = self.waiter(conn, q, "set");
        self.send_to(&w, "set", &[("size", &size)]);
        self.send_to(&w, "set", &[("rank", &r.to_string())]);
        self.send_to(&w, "set", &[("debug", "0")]);
        Ok(())
    }

    pub(super) fn get_maxes(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (a, b, c) = (
            MAX_KVSNAME.to_string(),
            MAX_KEY.to_string(),
            MAX_VALUE.to_string(),
        );
        self.answer(
            conn,
            q,
            &[("kvsname_max", &a), ("keylen_max", &b), ("vallen_max", &c)],
        )
    }

    pub(super) fn appnum_of(&self, conn: ConnId) -> i32 {
        let (_, r) = self.who(conn);
        self.job(conn)
            .and_then(|j| j.spec.appnum.get(r as usize).copied())
            .unwrap_or(0)
    }

    pub(super) fn get_appnum(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let a = self.appnum_of(conn).to_string();
        self.answer(conn, q, &[("appnum", &a)])
    }

    pub(super) fn get_my_kvsname(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, _) = self.who(conn);
        self.answer(conn, q, &[("kvsname", &k)])
    }

    pub(super) fn get_universe_size(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let u = self.job(conn).map_or(0, |j| j.spec.universe).to_string();
        self.answer(conn, q, &[("size", &u)])
    }

    pub(super) fn abort(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        let status = q
            .msg
            .get("exitcode")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        let message = q
            .msg
            .get("message")
            .or(q.msg.get("msg"))
            .unwrap_or_default()
            .to_string();
        if let Some(c) = self.conns.get_mut(&conn) {
            // no answer; its connection ending is no loss
            c.finalized = true;
        }
        self.out.push_back(Output::Host(Event::Aborted {
            kvsname: k,
            rank: r,
            status,
            message,
        }));
        Ok(())
    }

    pub(super) fn finalize(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, r) = self.who(conn);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.finalized = true;
        }
        self.answer(conn, q, &[])?;
        self.out.push_back(Output::Host(Event::Finalized {
            kvsname: k,
            rank: r,
        }));
        Ok(())
    }

    pub(super) fn fullinit(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        if self.conns.get(&conn).and_then(|c| c.version) != Some((2, 0)) {
            return Err(Refusal::NotInitialized("fullinit"));
        }
        let rank = q.msg.get("pmirank").or(q.msg.get("pmiid"));
        let rank = rank.and_then(|s| s.trim().parse::<u32>().ok());
        match (self.conns.get(&conn).and_then(|c| c.who.clone()), rank) {
            (Some((_, mine)), Some(asked)) if mine != asked => {
                return Err(Refusal::BadField {
                    cmd: "fullinit",
                    detail: format!("pmirank={asked} on rank {mine}'s PMI_FD"),
                })
            }
            (Some(_), _) => {}
            (None, Some(asked)) => {
                let (k, r) = match q.msg.get("pmijobid") {
                    Some(j) if self.jobs.contains_key(j) => (j.to_string(), asked),
                    _ => self
                        .ids
                        .get(&asked)
                        .cloned()
                        .ok_or_else(|| Refusal::NoSuchRank(format!("pmiid {asked}")))?,
                };
                self.claim(conn, &k, r)?;
            }
            (None, None) => {
                return Err(Refusal::BadField {
                    cmd: "fullinit",
                    detail: "no pmirank".into(),
                })
            }
        }
        let (k, r) = self.who(conn);
        let job = self
            .jobs
            .get(&k)
            .ok_or_else(|| Refusal::NoSuchRank(k.clone()))?;
        let size = job.spec.size.to_string();
        let spawner = job.spec.spawner.clone();
        let appnum = self.appnum_of(conn).to_string();
        let rs = r.to_string();
        let mut pairs = vec![
            ("pmi-version", "2"),
            ("pmi-subversion", "0"),
            ("rank", rs.as_str()),
            ("size", size.as_str()),
            ("appnum", appnum.as_str()),
        ];
        if let Some(s) = &spawner {
            pairs.push(("spawner-jobid", s));
        }
        pairs.extend([("debugged", "FALSE"), ("pmiverbose", "0")]);
        self.answer(conn, q, &pairs)?;
        self.out.push_back(Output::Host(Event::Initialized {
            kvsname: k,
            rank: r,
            version: (2, 0),
        }));
        Ok(())
    }

    pub(super) fn job_getid(&mut self, conn: ConnId, q: &Query) -> Result<(), Refusal> {
        let (k, _) = self.who(conn);
        self.answer(conn, q, &[("jobid", &k)])
    }
}
