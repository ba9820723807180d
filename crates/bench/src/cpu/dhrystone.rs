//! Dhrystone 2.1 (Weicker, 1988): a port of the published program's
//! procedures and functions (Proc_1 … Proc_8, Func_1 … Func_3) with its
//! records, globals and strings. Records live in a two-slot arena and
//! pointers are indices; everything else is as published. One run is one
//! pass of the main loop; DMIPS = runs per second / 1757.

use std::hint::black_box;

/// Dhrystone's enumeration; `Ident5` is declared and handled in Proc_6
/// but never produced, as in the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd)]
#[allow(dead_code)]
enum Enum {
    Ident1,
    Ident2,
    Ident3,
    Ident4,
    Ident5,
}

type Str30 = [u8; 31];

fn s30(text: &[u8; 30]) -> Str30 {
    let mut s = [0u8; 31];
    s[..30].copy_from_slice(text);
    s
}

#[derive(Debug, Clone, Copy)]
struct Record {
    ptr_comp: usize,
    discr: Enum,
    enum_comp: Enum,
    int_comp: i32,
    str_comp: Str30,
}

/// The program's global state.
struct Globals {
    rec: [Record; 2],
    ptr_glob: usize,
    int_glob: i32,
    bool_glob: bool,
    ch_1_glob: u8,
    ch_2_glob: u8,
    arr_1_glob: [i32; 50],
    arr_2_glob: Box<[[i32; 50]; 50]>,
}

/// The values the program ends with, to check the port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Int_Glob (5).
    pub int_glob: i32,
    /// Bool_Glob (true).
    pub bool_glob: bool,
    /// Ch_1_Glob, Ch_2_Glob ('A', 'B').
    pub chars: (u8, u8),
    /// `Arr_1_Glob[8]` (7).
    pub arr_1_8: i32,
    /// `Arr_2_Glob[8][7]` (runs + 10).
    pub arr_2_8_7: i32,
    /// Ptr_Glob's Int_Comp (17) and Next_Ptr_Glob's (18).
    pub int_comps: (i32, i32),
    /// Int_1_Loc, Int_2_Loc, Int_3_Loc (5, 13, 7).
    pub locals: (i32, i32, i32),
    /// Next_Ptr_Glob's Str_Comp ("DHRYSTONE PROGRAM, SOME STRING").
    pub str_comp: String,
}

impl Globals {
    fn proc_1(&mut self, ptr_val_par: usize) {
        let next = self.rec[ptr_val_par].ptr_comp;
        self.rec[next] = self.rec[self.ptr_glob];
        self.rec[ptr_val_par].int_comp = 5;
        self.rec[next].int_comp = self.rec[ptr_val_par].int_comp;
        self.rec[next].ptr_comp = self.rec[ptr_val_par].ptr_comp;
        self.rec[next].ptr_comp = self.proc_3(self.rec[next].ptr_comp);
        if self.rec[next].discr == Enum::Ident1 {
            self.rec[next].int_comp = 6;
            self.rec[next].enum_comp =
                self.proc_6(self.rec[ptr_val_par].enum_comp, self.rec[next].enum_comp);
            self.rec[next].ptr_comp = self.rec[self.ptr_glob].ptr_comp;
            self.rec[next].int_comp = proc_7(self.rec[next].int_comp, 10);
        } else {
            self.rec[ptr_val_par] = self.rec[self.rec[ptr_val_par].ptr_comp];
        }
    }

    fn proc_2(&mut self, int_par_ref: &mut i32) {
        let mut int_loc = *int_par_ref + 10;
        loop {
            let mut enum_loc = Enum::Ident2;
            if self.ch_1_glob == b'A' {
                int_loc -= 1;
                *int_par_ref = int_loc - self.int_glob;
                enum_loc = Enum::Ident1;
            }
            if enum_loc == Enum::Ident1 {
                break;
            }
        }
    }

    fn proc_3(&mut self, ptr_ref_par: usize) -> usize {
        // Ptr_Glob is never null here.
        let out = self.rec[self.ptr_glob].ptr_comp;
        let _ = ptr_ref_par;
        self.rec[self.ptr_glob].int_comp = proc_7(10, self.int_glob);
        out
    }

    fn proc_4(&mut self) {
        let bool_loc = self.ch_1_glob == b'A';
        self.bool_glob |= bool_loc;
        self.ch_2_glob = b'B';
    }

    fn proc_5(&mut self) {
        self.ch_1_glob = b'A';
        self.bool_glob = false;
    }

    fn proc_6(&self, enum_val_par: Enum, _old: Enum) -> Enum {
        let mut out = enum_val_par;
        if !func_3(enum_val_par) {
            out = Enum::Ident4;
        }
        match enum_val_par {
            Enum::Ident1 => Enum::Ident1,
            Enum::Ident2 => {
                if self.int_glob > 100 {
                    Enum::Ident1
                } else {
                    Enum::Ident4
                }
            }
            Enum::Ident3 => Enum::Ident2,
            Enum::Ident4 => out,
            Enum::Ident5 => Enum::Ident3,
        }
    }

    fn proc_8(&mut self, int_1_par: i32, int_2_par: i32) {
        let int_loc = (int_1_par + 5) as usize;
        self.arr_1_glob[int_loc] = int_2_par;
        self.arr_1_glob[int_loc + 1] = self.arr_1_glob[int_loc];
        self.arr_1_glob[int_loc + 30] = int_loc as i32;
        for int_index in int_loc..=int_loc + 1 {
            self.arr_2_glob[int_loc][int_index] = int_loc as i32;
        }
        self.arr_2_glob[int_loc][int_loc - 1] += 1;
        self.arr_2_glob[int_loc + 20][int_loc] = self.arr_1_glob[int_loc];
        self.int_glob = 5;
    }

    fn func_1(&mut self, ch_1_par: u8, ch_2_par: u8) -> Enum {
        let ch_1_loc = ch_1_par;
        let ch_2_loc = ch_1_loc;
        if ch_2_loc != ch_2_par {
            Enum::Ident1
        } else {
            self.ch_1_glob = ch_1_loc;
            Enum::Ident2
        }
    }

    fn func_2(&mut self, str_1: &Str30, str_2: &Str30) -> bool {
        let mut int_loc = 2;
        let mut ch_loc = b'A';
        while int_loc <= 2 {
            if self.func_1(str_1[int_loc], str_2[int_loc + 1]) == Enum::Ident1 {
                ch_loc = b'A';
                int_loc += 1;
            }
        }
        if (b'W'..b'Z').contains(&ch_loc) {
            int_loc = 7;
        }
        if ch_loc == b'R' {
            true
        } else if str_1 > str_2 {
            int_loc += 7;
            self.int_glob = int_loc as i32;
            true
        } else {
            false
        }
    }
}

fn proc_7(int_1_par: i32, int_2_par: i32) -> i32 {
    let int_loc = int_1_par + 2;
    int_2_par + int_loc
}

fn func_3(enum_par_val: Enum) -> bool {
    enum_par_val == Enum::Ident3
}

/// `runs` passes of the Dhrystone main loop.
pub fn run(runs: u64) -> Outcome {
    let blank = Record {
        ptr_comp: 0,
        discr: Enum::Ident1,
        enum_comp: Enum::Ident1,
        int_comp: 0,
        str_comp: [0; 31],
    };
    let mut g = Globals {
        rec: [blank; 2],
        ptr_glob: 0,
        int_glob: 0,
        bool_glob: false,
        ch_1_glob: 0,
        ch_2_glob: 0,
        arr_1_glob: [0; 50],
        arr_2_glob: Box::new([[0; 50]; 50]),
    };
    // Ptr_Glob = record 0, Next_Ptr_Glob = record 1.
    g.rec[0] = Record {
        ptr_comp: 1,
        discr: Enum::Ident1,
        enum_comp: Enum::Ident3,
        int_comp: 40,
        str_comp: s30(b"DHRYSTONE PROGRAM, SOME STRING"),
    };
    let str_1_loc = s30(b"DHRYSTONE PROGRAM, 1'ST STRING");
    g.arr_2_glob[8][7] = 10;
    let (mut int_1_loc, mut int_2_loc, mut int_3_loc) = (0, 0, 0);
    let mut str_2_loc;
    let runs = black_box(runs);
    for run_index in 1..=runs {
        g.proc_5();
        g.proc_4();
        int_1_loc = 2;
        int_2_loc = 3;
        str_2_loc = s30(b"DHRYSTONE PROGRAM, 2'ND STRING");
        let mut enum_loc = Enum::Ident2;
        g.bool_glob = !g.func_2(&str_1_loc, &str_2_loc);
        while int_1_loc < int_2_loc {
            // The published program stores 5·Int_1 − Int_2 in Int_3_Loc and
            // Proc_7 overwrites it at once; the computation stays.
            black_box(5 * int_1_loc - int_2_loc);
            int_3_loc = proc_7(int_1_loc, int_2_loc);
            int_1_loc += 1;
        }
        g.proc_8(int_1_loc, int_3_loc);
        g.proc_1(g.ptr_glob);
        let mut ch_index = b'A';
        while ch_index <= g.ch_2_glob {
            if enum_loc == g.func_1(ch_index, b'C') {
                enum_loc = g.proc_6(Enum::Ident1, enum_loc);
                str_2_loc = s30(b"DHRYSTONE PROGRAM, 3'RD STRING");
                int_2_loc = run_index as i32;
                g.int_glob = run_index as i32;
            }
            ch_index += 1;
        }
        black_box(&str_2_loc);
        int_2_loc *= int_1_loc;
        int_1_loc = int_2_loc / int_3_loc;
        int_2_loc = 7 * (int_2_loc - int_3_loc) - int_1_loc;
        g.proc_2(&mut int_1_loc);
    }
    Outcome {
        int_glob: g.int_glob,
        bool_glob: g.bool_glob,
        chars: (g.ch_1_glob, g.ch_2_glob),
        arr_1_8: g.arr_1_glob[8],
        arr_2_8_7: g.arr_2_glob[8][7],
        int_comps: (g.rec[0].int_comp, g.rec[1].int_comp),
        locals: (int_1_loc, int_2_loc, int_3_loc),
        str_comp: String::from_utf8_lossy(&g.rec[1].str_comp[..30]).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_with_the_values_the_published_program_prints() {
        // Dhrystone 2.1 prints these "should be" values after its run.
        let o = run(1000);
        assert_eq!(o.int_glob, 5);
        assert!(o.bool_glob);
        assert_eq!(o.chars, (b'A', b'B'));
        assert_eq!(o.arr_1_8, 7);
        assert_eq!(o.arr_2_8_7, 1000 + 10);
        assert_eq!(o.int_comps, (17, 18));
        assert_eq!(o.locals, (5, 13, 7));
        assert_eq!(o.str_comp, "DHRYSTONE PROGRAM, SOME STRING");
    }
}
