package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadReportHeader.Outcome;
import dev.fairway.lb.LoadReportParser.Report;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

class LoadReportParserTest {
  private final LoadReportParser parser = new LoadReportParser();
  private final Report report = new Report();

  private Outcome parse(String value) {
    return parser.parse(value, report);
  }

  private void assertEmpty() {
    assertThat(report.cpuUtilization).isNaN();
    assertThat(report.memUtilization).isNaN();
    assertThat(report.applicationUtilization).isNaN();
    assertThat(report.rpsFractional).isNaN();
    assertThat(report.eps).isNaN();
    assertThat(report.requestsInFlight).isNaN();
    assertThat(report.workers).isNaN();
  }

  // The grammar's examples

  /** Envoy's orca_parser_test.cc example, with {@code separator} between keys and values. */
  private static String envoysExample(char separator) {
    return ("TEXT cpu_utilization=0.7,application_utilization=0.8,mem_utilization=0.9,rps_fractional=1000,eps=2,"
        + "named_metrics.foo=123,named_metrics.bar=0.2,utilization.total=0.5").replace('=', separator);
  }

  private void assertEnvoysExampleFields() {
    assertThat(report.cpuUtilization).isEqualTo(0.7);
    assertThat(report.applicationUtilization).isEqualTo(0.8);
    assertThat(report.memUtilization).isEqualTo(0.9);
    assertThat(report.rpsFractional).isEqualTo(1000.0);
    assertThat(report.eps).isEqualTo(2.0);
    assertThat(report.requestsInFlight).isNaN();
    assertThat(report.workers).isNaN();
  }

  @Test
  void envoysExample_keepsTheStandardFieldsAndSkipsOtherNamedMetrics() {
    // NativeHttpEncodedHeader.
    assertThat(parse(envoysExample('='))).isEqualTo(Outcome.PARSED);
    assertEnvoysExampleFields();
    assertThat(parser.malformed()).isZero();
  }

  @Test
  void envoysExampleWithColons_parsesTheSame() {
    // NativeHttpEncodedHeaderWithColon: the separator of the first version.
    assertThat(parse(envoysExample(':'))).isEqualTo(Outcome.PARSED);
    assertEnvoysExampleFields();
  }

  @Test
  void grpcGosReport_inTextForm() {
    // The report grpc-go sends (in binary) in Envoy's LegacyBinaryHeaderFromGrpcGo test.
    assertThat(parse("TEXT cpu_utilization=0.5, rps_fractional=100, eps=2, named_metrics.rif=4"))
        .isEqualTo(Outcome.PARSED);
    assertThat(report.cpuUtilization).isEqualTo(0.5);
    assertThat(report.rpsFractional).isEqualTo(100.0);
    assertThat(report.eps).isEqualTo(2.0);
    assertThat(report.requestsInFlight).isEqualTo(4.0);
    assertThat(report.utilization()).isEqualTo(0.5);
  }

  @Test
  void labBackendsReport_givesInFlightWorkersAndUtilization() {
    assertThat(parse("TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8"))
        .isEqualTo(Outcome.PARSED);
    assertThat(report.applicationUtilization).isEqualTo(0.625);
    assertThat(report.requestsInFlight).isEqualTo(5.0);
    assertThat(report.workers).isEqualTo(8.0);
    assertThat(report.cpuUtilization).isNaN();
    assertThat(report.utilization()).isEqualTo(0.625);
  }

  @Test
  void utilization_prefersApplicationOverCpuUnlessZero() {
    parse("TEXT cpu_utilization=0.3, application_utilization=0.9");
    assertThat(report.utilization()).isEqualTo(0.9);
    parse("TEXT cpu_utilization=0.3, application_utilization=0");
    assertThat(report.utilization()).isEqualTo(0.3);
    parse("TEXT application_utilization=0, named_metrics.rif=0");
    assertThat(report.utilization()).isZero(); // an idle server, not an unknown one
    parse("TEXT eps=1");
    assertThat(report.utilization()).isNaN();
  }

  @Test
  void whitespace_isToleratedAroundEveryToken() {
    assertThat(parse("  TEXT \t cpu_utilization = 0.3 ,\tnamed_metrics.rif\t:\t5 , ")).isEqualTo(Outcome.PARSED);
    assertThat(report.cpuUtilization).isEqualTo(0.3);
    assertThat(report.requestsInFlight).isEqualTo(5.0);
  }

  @Test
  void emptyListElements_areSkipped() {
    assertThat(parse("TEXT ,cpu_utilization=0.3,, ,eps=1,")).isEqualTo(Outcome.PARSED);
    assertThat(report.cpuUtilization).isEqualTo(0.3);
    assertThat(report.eps).isEqualTo(1.0);
  }

  @Test
  void prefixAlone_isAnEmptyReport() {
    assertThat(parse("TEXT")).isEqualTo(Outcome.PARSED);
    assertEmpty();
    assertThat(parse("TEXT ")).isEqualTo(Outcome.PARSED);
    assertEmpty();
    assertThat(parser.malformed()).isZero();
  }

  @Test
  void unknownKeys_areSkippedUnreadWhateverTheirValue() {
    assertThat(parse("TEXT request_cost.db=oops, cpu_utilization=0.25, x-y=NaN, named_metrics.rif=3, weird=a=b"))
        .isEqualTo(Outcome.PARSED);
    assertThat(report.cpuUtilization).isEqualTo(0.25);
    assertThat(report.requestsInFlight).isEqualTo(3.0);
    // A kept key's prefix or extension is another key.
    assertThat(parse("TEXT named_metrics.rifs=9, cpu_utilization_max=1, named_metrics.=2")).isEqualTo(Outcome.PARSED);
    assertEmpty();
  }

  @Test
  void numbers_inEveryDecimalForm() {
    assertThat(parseNumber("1e3")).isEqualTo(1000.0);
    assertThat(parseNumber("2.5E-1")).isEqualTo(0.25);
    assertThat(parseNumber(".5")).isEqualTo(0.5);
    assertThat(parseNumber("5.")).isEqualTo(5.0);
    assertThat(parseNumber("+0.25")).isEqualTo(0.25);
    assertThat(parseNumber("0.1")).isEqualTo(0.1);
    assertThat(parseNumber("0.0001")).isEqualTo(1e-4);
    assertThat(parseNumber("123456789012345")).isEqualTo(123456789012345.0);
    assertThat(parseNumber("000.3")).isEqualTo(0.3);
    assertThat(parseNumber("1E+2")).isEqualTo(100.0);
    // Past the exact range: within a few ulps.
    assertThat(parseNumber("0.12345678901234567890123")).isCloseTo(0.12345678901234568, org.assertj.core.api.Assertions.within(1e-16));
    assertThat(parseNumber("12345678901234567890123")).isCloseTo(1.2345678901234568e22, org.assertj.core.api.Assertions.offset(1e7));
    assertThat(parseNumber("1e-30")).isCloseTo(1e-30, org.assertj.core.api.Assertions.offset(1e-44));
  }

  @Test
  void negativeZero_isZero() {
    assertThat(parse("TEXT cpu_utilization=-0")).isEqualTo(Outcome.PARSED);
    assertThat(Double.doubleToRawLongBits(report.cpuUtilization)).isEqualTo(Double.doubleToRawLongBits(0.0));
  }

  private double parseNumber(String number) {
    assertThat(parse("TEXT rps_fractional=" + number)).as(number).isEqualTo(Outcome.PARSED);
    return report.rpsFractional;
  }

  // Malformed headers: ignored, counted, never an exception

  @Test
  void absentHeader_isNotCounted() {
    report.cpuUtilization = 0.9;
    assertThat(parse(null)).isEqualTo(Outcome.ABSENT);
    assertEmpty();
    assertThat(parser.malformed()).isZero();
  }

  @Test
  void malformed_everyKindIsIgnoredAndCounted() {
    String[] malformed = {
      "", // empty
      "   ",
      "cpu_utilization=0.3", // no TEXT prefix
      "TEXTcpu_utilization=0.3",
      "TEXTUAL cpu_utilization=0.3",
      "text cpu_utilization=0.3", // the prefix is upper case, as Envoy reads it
      "BAD random-value", // Envoy's InvalidOrcaHeaderPrefix
      "JSON {\"cpu_utilization\": 0.7, \"named_metrics\": {\"foo\": 123}}", // JSON form: not read
      "BIN CQAAAAAAAOA/MQAAAAAAAFlAOQAAAAAAAABAQg4KA3JpZhEAAAAAAAAQQA==", // binary form: not read
      "TEXT cpu_utilization=\"0.7\"", // Envoy's NativeHttpEncodedHeaderIncorrectFieldType
      "TEXT cpu_utilization=NaN",
      "TEXT cpu_utilization=nan",
      "TEXT cpu_utilization=Infinity",
      "TEXT cpu_utilization=1e400", // overflows to infinity
      "TEXT cpu_utilization=-1", // negative
      "TEXT named_metrics.rif=-0.5",
      "TEXT eps=0x10",
      "TEXT eps=1e",
      "TEXT eps=1e+",
      "TEXT eps=.",
      "TEXT eps=-",
      "TEXT eps=1.2.3",
      "TEXT eps=1 2",
      "TEXT eps=1,5", // the 5 is a pair without a separator
      "TEXT cpu_utilization=0.7,cpu_utilization=0.8", // Envoy's ContainsDuplicateMetric
      "TEXT named_metrics.rif=1, named_metrics.rif=1",
      "TEXT not-a-list-of-key-value-pairs", // Envoy's InvalidNativeHttpEncodedHeader: missing '='
      "TEXT cpu_utilization",
      "TEXT cpu_utilization=",
      "TEXT cpu_utilization= , eps=1",
      "TEXT =0.3", // no key
      "TEXT cpu utilization=0.3", // a space inside a key
    };
    for (String value : malformed) {
      report.cpuUtilization = 0.9;
      assertThat(parse(value)).as("\"%s\"", value).isEqualTo(Outcome.MALFORMED);
      assertEmpty();
    }
    assertThat(parser.malformed()).isEqualTo(malformed.length);
  }

  @Test
  void parseDecimal_manyDigitsAtEitherEndOfTheRange_isCorrectlyRounded() {
    // Found by LoadReportParserFuzzTest.decimal: 17 digits pushed the scale to 10^-324, which alone is
    // 0, and 1.7976931348623158e308 (just below the overflow threshold) rounded up to infinity.
    assertThat(LoadReportParser.parseDecimal("2.2250738585072014E-308", 0, 23)).isEqualTo(Double.MIN_NORMAL);
    assertThat(LoadReportParser.parseDecimal("1.7976931348623158e308", 0, 22)).isEqualTo(Double.MAX_VALUE);
    assertThat(LoadReportParser.parseDecimal("123456789012345678e-325", 0, 23))
        .isEqualTo(Double.parseDouble("123456789012345678e-325"));
    assertThat(LoadReportParser.parseDecimal("4.9e-324", 0, 8)).isEqualTo(Double.MIN_VALUE);
    assertThat(LoadReportParser.parseDecimal("-12345678901234567890.5", 0, 23)).isEqualTo(-12345678901234567890.5);
    assertThat(parse("TEXT eps=2.2250738585072014E-308, cpu_utilization=1.7976931348623158e308"))
        .isEqualTo(Outcome.PARSED);
    assertThat(report.eps).isEqualTo(Double.MIN_NORMAL);
    assertThat(report.cpuUtilization).isEqualTo(Double.MAX_VALUE);
  }

  @Test
  void malformedLaterPair_dropsTheWholeReport() {
    assertThat(parse("TEXT cpu_utilization=0.3, named_metrics.rif=5, eps=oops")).isEqualTo(Outcome.MALFORMED);
    assertEmpty();
    assertThat(parser.malformed()).isEqualTo(1);
  }

  @Test
  void report_isClearedBetweenParses() {
    parse("TEXT cpu_utilization=0.3, named_metrics.rif=5");
    assertThat(parse("TEXT eps=2")).isEqualTo(Outcome.PARSED);
    assertThat(report.eps).isEqualTo(2.0);
    assertThat(report.cpuUtilization).isNaN();
    assertThat(report.requestsInFlight).isNaN();
  }

  @Test
  void parse_allocatesNothing() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    String[] values = {
      "TEXT application_utilization=0.625, named_metrics.rif=5, named_metrics.workers=8",
      "TEXT cpu_utilization=0.7,application_utilization=0.8,mem_utilization=0.9,rps_fractional=1000,eps=2,"
          + "named_metrics.foo=123,utilization.total=0.5",
      "JSON {\"cpu_utilization\": 0.7}",
      "TEXT cpu_utilization=NaN",
      null,
    };
    double sum = 0;
    for (int i = 0; i < 20_000; i++) { // warm up: compiled code, loaded classes
      parse(values[i % values.length]);
      sum += report.eps;
    }
    long thread = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < 100_000; i++) {
      parse(values[i % values.length]);
      sum += report.eps;
    }
    long allocated = threads.getThreadAllocatedBytes(thread) - before;
    // One 16-byte object per parse would be 1.6 MB; the bound leaves room for the MXBean's own bytes.
    assertThat(allocated).as("bytes allocated by 100,000 parses").isLessThan(16_384);
    assertThat(sum).isNaN(); // the loop's results are used
  }
}
