/* A GStreamer application written for GStreamer 1.28's `vmaf` element, using
 * only what that element documents: its properties (enums set by their
 * integer values, as C code does), its "VMAF" element messages read with
 * 1.28's GTypes, and its results file. The element name is a parameter, so
 * the same program runs unchanged against `vmaf` or `vmafhip`.
 *
 *   vmaf128_app ELEMENT RESULTS_FILE
 *
 * Exit 0 and "N passed, 0 failed" when every check holds. */
#include <gst/gst.h>
#include <stdio.h>
#include <string.h>

#define FRAMES 12

static int passed = 0, failed = 0;

static void check (gboolean ok, const char *what)
{
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf (stderr, "FAILED: %s\n", what);
  }
}

int main (int argc, char **argv)
{
  if (argc != 3) {
    fprintf (stderr, "usage: %s ELEMENT RESULTS_FILE\n", argv[0]);
    return 2;
  }
  gst_init (&argc, &argv);
  const char *element = argv[1], *results = argv[2];
  remove (results);

  gchar *desc = g_strdup_printf (
      "videotestsrc num-buffers=%d pattern=ball ! video/x-raw,format=I420,width=320,height=240,framerate=25/1 "
      "! tee name=t t. ! queue ! v.ref_sink "
      "t. ! queue ! videoscale ! video/x-raw,width=160,height=120 ! videoscale ! video/x-raw,width=320,height=240 ! v.dist_sink "
      "%s name=v ! fakesink", FRAMES, element);
  GError *err = NULL;
  GstElement *pipeline = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!pipeline) {
    fprintf (stderr, "pipeline: %s\n", err ? err->message : "?");
    return 1;
  }
  GstElement *v = gst_bin_get_by_name (GST_BIN (pipeline), "v");
  /* Every 1.28 property; enums by their integer values. */
  g_object_set (v,
      "model-filename", "vmaf_v0.6.1",
      "disable-clip", FALSE,
      "enable-transform", FALSE,
      "phone-model", FALSE,
      "psnr", TRUE,
      "ssim", TRUE,
      "ms-ssim", TRUE,
      "pool-method", 3,         /* mean */
      "threads", 2u,
      "subsample", 1u,
      "conf-interval", FALSE,
      "frame-message", TRUE,
      "results-filename", results,
      "results-format", 2,      /* json */
      "log-level", 0,           /* none */
      NULL);
  /* The values read back as set. */
  gint pool = -1, fmt = -1, level = -1;
  guint threads = 0, subsample = 0;
  gchar *model = NULL;
  g_object_get (v, "pool-method", &pool, "results-format", &fmt, "log-level", &level,
      "threads", &threads, "subsample", &subsample, "model-filename", &model, NULL);
  check (pool == 3, "pool-method reads back 3 (mean)");
  check (fmt == 2, "results-format reads back 2 (json)");
  check (level == 0, "log-level reads back 0 (none)");
  check (threads == 2 && subsample == 1, "threads and subsample read back");
  check (model && strcmp (model, "vmaf_v0.6.1") == 0, "model-filename reads back");
  g_free (model);

  gst_element_set_state (pipeline, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (pipeline);
  int frames = 0, pooled = 0, last_index = -1;
  gboolean in_order = TRUE, typed = TRUE;
  for (;;) {
    GstMessage *msg = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        GST_MESSAGE_ELEMENT | GST_MESSAGE_EOS | GST_MESSAGE_ERROR);
    if (!msg) {
      check (FALSE, "EOS within 60 s");
      break;
    }
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *e = NULL;
      gst_message_parse_error (msg, &e, NULL);
      fprintf (stderr, "error: %s\n", e->message);
      g_error_free (e);
      check (FALSE, "no error");
      gst_message_unref (msg);
      break;
    }
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_EOS) {
      gst_message_unref (msg);
      break;
    }
    const GstStructure *s = gst_message_get_structure (msg);
    if (s && gst_structure_has_name (s, "VMAF")) {
      const gchar *type = gst_structure_get_string (s, "type");
      guint64 ts, st, rt, dur;
      gdouble score, psnr, ssim, ms_ssim;
      gboolean times = gst_structure_get_uint64 (s, "timestamp", &ts)
          && gst_structure_get_uint64 (s, "stream-time", &st)
          && gst_structure_get_uint64 (s, "running-time", &rt)
          && gst_structure_get_uint64 (s, "duration", &dur);
      gboolean scores = gst_structure_get_double (s, "score", &score)
          && gst_structure_get_double (s, "psnr-y", &psnr)
          && gst_structure_get_double (s, "ssim", &ssim)
          && gst_structure_get_double (s, "ms-ssim", &ms_ssim);
      if (type && strcmp (type, "frame") == 0) {
        gint index;
        if (!gst_structure_get_int (s, "index", &index) || !times || !scores)
          typed = FALSE;
        else {
          if (index <= last_index)
            in_order = FALSE;
          last_index = index;
          if (score < 0.0 || score > 100.0 || psnr <= 0.0 || ssim <= 0.0 || ms_ssim <= 0.0)
            typed = FALSE;
        }
        frames++;
      } else if (type && strcmp (type, "pooled") == 0) {
        check (times && scores, "pooled message: guint64 times, double scores");
        check (score > 0.0 && score <= 100.0, "pooled score within 0..100");
        pooled++;
      }
    }
    gst_message_unref (msg);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  check (frames > 0, "frame messages posted");
  check (typed, "frame messages: gint index, guint64 times, double scores");
  check (in_order, "frame indices increase");
  check (pooled == 1, "one pooled message");

  /* results-format 2 wrote JSON. */
  gchar *text = NULL;
  gsize len = 0;
  gboolean read = g_file_get_contents (results, &text, &len, NULL);
  check (read, "results file written");
  check (read && len > 0 && text[0] == '{' && strstr (text, "\"pooled_metrics\"") != NULL,
      "results file is libvmaf JSON");
  g_free (text);

  gst_object_unref (bus);
  gst_object_unref (v);
  gst_object_unref (pipeline);
  printf ("%s: %d frame messages\n", element, frames);
  printf ("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
