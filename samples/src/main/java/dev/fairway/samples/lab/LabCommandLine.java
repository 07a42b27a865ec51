package dev.fairway.samples.lab;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * The lab's command line read into {@link LabOptions}: each option named in {@link #usage()} goes to
 * the builder setter of the same name, which validates it; a bad option or value is a {@link
 * LabOptions.UsageException} whose message names the option and the value.
 */
final class LabCommandLine {
  private LabCommandLine() {}

  static String usage() {
    return String.join(
        "\n",
        "usage: java -jar fairway-samples.jar lab [options]",
        "  --scenario light|steady|burst|failure|recovery|fleet|slowdown|fastfail|zones|jitter|liar|rolling|subset|kubernetes|reports|all",
        "                       (default all: every scenario but zones, jitter, liar, rolling, subset, kubernetes and reports, which run only",
        "                       when named)",
        "  --strategies all|NAME,NAME...   NAME is a Strategy.name(): " + String.join(", ", LabOptions.ALL_STRATEGIES),
        "  --duration 30s       measured window per run, after warm-up (units ms, s, m; default 30s)",
        "  --time-scale 1.0     multiplies every service time (0.1 turns 50 ms into 5 ms; default 1.0)",
        "                       with neither --duration nor --time-scale: quick profile, time scale 0.2 and 1.6s",
        "  --workers 8          worker threads per backend (c)",
        "  --users N            users (peak users for burst) instead of each scenario's own",
        "  --clients K          independent clients (own balancer and OkHttp client each) instead of each",
        "                       scenario's own (1; fleet 50, slowdown and fastfail 10); users round-robin",
        "  --load-reports       backends send ORCA load reports (endpoint-load-metrics: TEXT ...)",
        "  --report-style S     how honest backends word them: uncapped|capped, rif-excludes-answered|",
        "                       rif-counts-answered, workers|no-workers (default uncapped,rif-excludes-answered,workers),",
        "                       or tomcat-200 (the starter's filter on Tomcat's 200 threads)",
        "  --runs N             runs per cell of the reports scenario (default 1)",
        "  --cells full|core|NAME,...   the reports scenario's cells: all, those a loaded machine can fit, or",
        "                       only the conditions named (default full); NAME is one of",
        "                       " + String.join(", ", ReportsLab.CONDITION_NAMES),
        "  --csv FILE           also write the results as CSV",
        "  --report FILE.html   where the HTML report goes (default lab-report.html)",
        "  --max-attempts N     attempts per call across targets (1 = no retry; default 3)",
        "  --hedge p95|p99|NNms|off   hedge calls after that percentile of recent latency, or after a fixed",
        "                       wall-clock delay (not scaled); default off",
        "  --client okhttp|spring   okhttp (default): OkHttp with Fairway's interceptor; spring: each client a",
        "                       Spring context whose @LoadBalanced RestClient goes through Spring Cloud",
        "                       LoadBalancer, with Spring's retry on. Its strategies: "
            + String.join(", ", SpringLabClient.SPRING_STRATEGIES) + " (Spring's own),",
        "                       or a Fairway NAME (through the starter); default: "
            + String.join(" and ", SpringLabClient.SPRING_STRATEGIES) + " and Fairway's default",
        "  --client jdk|hc5     jdk: the JDK's HttpClient behind FairwayHttpClient; hc5: Apache HttpClient 5",
        "                       customized by FairwayHttpClient5 (neither hedges; no zones, subset, rolling or kubernetes)",
        "  --client okhttp,jdk,hc5   a list: every scenario x strategy runs through each client in turn, one",
        "                       after the other; the tables and the CSV name the client of each row");
  }

  /** Parses the arguments after {@code lab}. */
  static LabOptions parse(String... args) {
    LabOptions.Builder b = LabOptions.builder();
    b.report(Path.of("lab-report.html"));
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      String value;
      int eq = arg.indexOf('=');
      if (arg.startsWith("--") && eq > 0) {
        value = arg.substring(eq + 1);
        arg = arg.substring(0, eq);
      } else if (arg.equals("--help") || arg.equals("-h")) {
        throw new LabOptions.UsageException(null);
      } else if (arg.equals("--load-reports")) {
        b.loadReports(true);
        continue;
      } else {
        if (i + 1 >= args.length) {
          throw new LabOptions.UsageException(arg + ": missing value");
        }
        value = args[++i];
      }
      switch (arg) {
        case "--scenario":
          b.scenarios(value);
          break;
        case "--strategies":
          b.strategies(value);
          break;
        case "--duration":
          b.duration(parseDuration(value));
          break;
        case "--time-scale":
          b.timeScale(parseDouble("--time-scale", value));
          break;
        case "--workers":
          b.workers(parseInt("--workers", value));
          break;
        case "--users":
          b.users(parseInt("--users", value));
          break;
        case "--clients":
          b.clients(parseInt("--clients", value));
          break;
        case "--load-reports":
          b.loadReports(parseBoolean("--load-reports", value));
          break;
        case "--csv":
          b.csv(Path.of(value));
          break;
        case "--report":
          b.report(Path.of(value));
          break;
        case "--max-attempts":
          b.maxAttempts(parseInt("--max-attempts", value));
          break;
        case "--hedge":
          b.hedge(value);
          break;
        case "--report-style":
          b.reportStyle(value);
          break;
        case "--runs":
          b.runs(parseInt("--runs", value));
          break;
        case "--cells":
          b.cells(value);
          break;
        case "--client":
          b.clientKinds(value);
          break;
        default:
          throw new LabOptions.UsageException("unknown option: " + arg);
      }
    }
    return b.build();
  }

  static Duration parseDuration(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (t.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      }
      double amount;
      double unit;
      if (t.endsWith("s")) {
        amount = Double.parseDouble(t.substring(0, t.length() - 1));
        unit = 1;
      } else if (t.endsWith("m")) {
        amount = Double.parseDouble(t.substring(0, t.length() - 1));
        unit = 60;
      } else {
        amount = Double.parseDouble(t);
        unit = 1;
      }
      return Duration.ofNanos((long) (amount * unit * 1e9));
    } catch (NumberFormatException e) {
      throw new LabOptions.UsageException("--duration: \"" + text + "\" (expected: a time like 30s, 500ms or 2m)");
    }
  }

  private static double parseDouble(String field, String text) {
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new LabOptions.UsageException(field + ": \"" + text + "\" (expected: a number)");
    }
  }

  private static boolean parseBoolean(String field, String text) {
    switch (text.trim().toLowerCase(Locale.ROOT)) {
      case "true":
        return true;
      case "false":
        return false;
      default:
        throw new LabOptions.UsageException(field + ": \"" + text + "\" (expected: true or false)");
    }
  }

  private static int parseInt(String field, String text) {
    try {
      return Integer.parseInt(text.trim());
    } catch (NumberFormatException e) {
      throw new LabOptions.UsageException(field + ": \"" + text + "\" (expected: a whole number)");
    }
  }
}
