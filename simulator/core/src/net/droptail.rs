/// First in, first out; an arrival that finds `limit` packets waiting is dropped.
pub struct DropTail {
    limit: u32,
}

impl DropTail {
    pub fn new(limit: u32) -> Self {
        DropTail { limit }
    }

    pub fn admit(&self, waiting: usize) -> bool {
        waiting < self.limit as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arrival_that_would_exceed_the_limit_is_dropped() {
        let q = DropTail::new(2);
        assert!(q.admit(0));
        assert!(q.admit(1));
        assert!(!q.admit(2));
    }
}
