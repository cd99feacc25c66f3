//! A rendition's results file and HTML report: opened at start, written
//! frame by frame, finished (and reopened) at each segment's end.

use super::*;

/// The streamed results file of one segment.
pub(super) enum ResultsFile {
    None,
    /// Opened (created or truncated), nothing written yet.
    Opened(std::fs::File),
    Writing(ResultsWriter<std::io::BufWriter<std::fs::File>>),
    /// Finished; the next segment truncates and rewrites the file.
    Done,
}

pub(super) fn results_format(s: &Settings) -> Format {
    match s.results_format {
        ResultsFormat::Xml => Format::Xml,
        ResultsFormat::Csv => Format::Csv,
        ResultsFormat::Jsonl => Format::Jsonl,
        // A filename without a format means JSON.
        ResultsFormat::Json | ResultsFormat::None => Format::Json,
    }
}

pub(super) fn open_results(path: &str) -> Result<std::fs::File, gst::ErrorMessage> {
    std::fs::File::create(path).map_err(|e| {
        gst::error_msg!(
            gst::ResourceError::OpenWrite,
            ("results-filename \"{path}\" cannot be written: {e}"),
            ["opening the results file at start"]
        )
    })
}

/// Writes `bytes` over the finished results file at offset `at`.
pub(super) fn write_at(
    out: std::io::BufWriter<std::fs::File>,
    at: u64,
    bytes: &[u8],
) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let mut file = out.into_inner().map_err(|e| e.into_error())?;
    file.seek(std::io::SeekFrom::Start(at))?;
    file.write_all(bytes)?;
    file.flush()
}

pub(super) fn report_io_error(path: &str, e: std::io::Error) -> gst::ErrorMessage {
    gst::error_msg!(
        gst::ResourceError::OpenWrite,
        ("report-filename \"{path}\" cannot be written: {e}"),
        ["the HTML report"]
    )
}

pub(super) fn results_io_error(path: &str, e: std::io::Error) -> gst::ErrorMessage {
    gst::error_msg!(
        gst::ResourceError::Write,
        ("results-filename \"{path}\": {e}"),
        ["writing the results file"]
    )
}

impl Rendition {
    /// The results file's writer, its header written: the one in use, or a
    /// new one on the file opened at start (or reopened for a new segment).
    pub(super) fn results_writer(
        &mut self,
        path: &str,
    ) -> Result<&mut ResultsWriter<std::io::BufWriter<std::fs::File>>, gst::ErrorMessage> {
        let file = match std::mem::replace(&mut self.results, ResultsFile::None) {
            ResultsFile::Writing(w) => {
                self.results = ResultsFile::Writing(w);
                None
            }
            ResultsFile::Opened(file) => Some(file),
            ResultsFile::None | ResultsFile::Done => Some(open_results(path)?),
        };
        if let Some(file) = file {
            // The header's size: the reference's, the size scored.
            let (width, height) = self
                .checked
                .as_ref()
                .map_or((0, 0), |(r, _)| (r.width() as usize, r.height() as usize));
            let w = ResultsWriter::begin(
                std::io::BufWriter::new(file),
                results_format(&self.settings),
                width,
                height,
                None,
                "3.2.0",
            )
            .map_err(|e| results_io_error(path, e))?;
            self.results = ResultsFile::Writing(w);
        }
        match &mut self.results {
            ResultsFile::Writing(w) => Ok(w),
            _ => unreachable!("a writer was just put there"),
        }
    }

    /// Appends final frames to the results file (header first).
    pub(super) fn write_frames(&mut self, frames: &[FrameScores]) -> Result<(), gst::ErrorMessage> {
        let Some(path) = self.settings.results_filename.clone() else {
            return Ok(());
        };
        if frames.is_empty() {
            return Ok(());
        }
        let w = self.results_writer(&path)?;
        for f in frames {
            w.frame(f).map_err(|e| results_io_error(&path, e))?;
        }
        // Every final frame reaches the file, so a crash loses none.
        w.flush().map_err(|e| results_io_error(&path, e))
    }

    /// A gap of an input, as a line of JSON Lines results (other formats
    /// have no place for it).
    pub(in crate::element) fn write_gap(
        &mut self,
        gap: &super::super::Gap,
    ) -> Result<(), gst::ErrorMessage> {
        let Some(path) = self.settings.results_filename.clone() else {
            return Ok(());
        };
        if results_format(&self.settings) != Format::Jsonl {
            return Ok(());
        }
        let w = self.results_writer(&path)?;
        w.line(&gap.json())
            .and_then(|_| w.flush())
            .map_err(|e| results_io_error(&path, e))
    }

    /// Closes the results file with the pooled part (an empty file gets
    /// its header too).
    pub(super) fn finish_results(
        &mut self,
        pooled: &PooledScores,
    ) -> Result<(), gst::ErrorMessage> {
        let Some(path) = self.settings.results_filename.clone() else {
            return Ok(());
        };
        self.results_writer(&path)?;
        let counts = self.pairings.counts;
        let coverage = Coverage {
            reference_frames: counts.reference(),
            distorted_frames: counts.distorted,
            scored_frames: pooled.frames,
            lengths_differ: counts.lengths_differ() && !self.interrupted,
            interrupted: self.interrupted,
            offset: self.alignment.map_or(0, |a| a.0),
            offset_confidence: self.alignment.and_then(|a| a.1),
            dropped: counts.dropped,
            duplicated: counts.duplicated,
            late: counts.late,
        };
        if let ResultsFile::Writing(w) = std::mem::replace(&mut self.results, ResultsFile::Done) {
            let fps = w.fps_patch();
            let out = w
                .finish(pooled, Some(&coverage))
                .map_err(|e| results_io_error(&path, e))?;
            if let Some((at, bytes)) = fps {
                write_at(out, at, &bytes).map_err(|e| results_io_error(&path, e))?;
            }
        }
        Ok(())
    }
}

impl Rendition {
    /// Writes the HTML report of the segment that ended (EOS or a flushing
    /// seek) and starts a fresh one for the next.
    pub(super) fn write_report(&mut self, why: SegmentEnd) -> Result<(), gst::ErrorMessage> {
        let (Some(path), Some(r)) = (self.settings.report_filename.clone(), self.report.take())
        else {
            return Ok(());
        };
        let s = &self.settings;
        let [reference, distorted] = self
            .inputs
            .clone()
            .unwrap_or_else(|| ["(no frame scored)".into(), "(no frame scored)".into()]);
        let title = s
            .report_title
            .clone()
            .unwrap_or_else(|| format!("{reference} vs {distorted}"));
        let mut facts = vec![
            ("reference".to_string(), reference),
            ("distorted".to_string(), distorted),
        ];
        facts.push(("rendition".into(), self.describe()));
        if let Some((info, _)) = &self.checked {
            let fps = info.fps();
            facts.push((
                "video".into(),
                format!(
                    "{}x{} {} at {}",
                    info.width(),
                    info.height(),
                    info.format().to_str(),
                    if fps.numer() > 0 {
                        format!("{:.3} fps", fps.numer() as f64 / fps.denom() as f64)
                    } else {
                        "a variable frame rate".into()
                    }
                ),
            ));
        }
        let mut model = s.model_filename.clone();
        for (on, flag) in [
            (s.disable_clip, "disable-clip"),
            (s.enable_transform || s.phone_model, "enable-transform"),
        ] {
            if on {
                model.push_str(&format!(", {flag}"));
            }
        }
        facts.push(("model".into(), model));
        facts.push(("backend".into(), self.backend.clone()));
        let mut frames = r.frames().to_string();
        if s.subsample > 1 {
            frames.push_str(&format!(" (every {}th frame scored)", s.subsample));
        }
        facts.push(("frames".into(), frames));
        if let Some(d) = self.total_duration {
            facts.push((
                "stream duration".into(),
                format!("{:.3} s", d.nseconds() as f64 * 1e-9),
            ));
        }
        if let Some(t0) = self.report_started {
            let secs = t0.elapsed().as_secs_f64();
            facts.push((
                "wall time".into(),
                format!(
                    "{secs:.2} s ({:.1} frames/s, decoding and scaling included)",
                    r.frames() as f64 / secs.max(1e-9)
                ),
            ));
        }
        facts.push((
            "segment ended by".into(),
            match why {
                SegmentEnd::Flush => "a flushing seek",
                SegmentEnd::Released => "its pad's release",
                _ => "end of stream",
            }
            .into(),
        ));
        facts.push(("written".into(), report::utc_now()));
        facts.push((
            "vmafhip".into(),
            concat!(
                env!("CARGO_PKG_VERSION"),
                " (libvmaf 3.2.0 integer extractors)"
            )
            .into(),
        ));
        std::fs::write(&path, r.render(&title, &facts)).map_err(|e| report_io_error(&path, e))?;
        self.report = Some(report::Report::new());
        self.report_started = None;
        Ok(())
    }
}
