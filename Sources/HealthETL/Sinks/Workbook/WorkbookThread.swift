import Dispatch
import Foundation
import HealthExtract
import HealthModel
import Synchronization

/// The thread that owns one run's `health.xlsx`: libxlsxwriter is called from this thread only.
///
/// Writing a workbook costs the run about a second on a four-year export — cells formatted into
/// each sheet's row file, then the whole file deflated on close — and none of it is needed by
/// another stage. So the tables' writers hand their rows over (`post`) and go on, and the close
/// deflates while the report is written; only values cross threads. A problem with a row is kept
/// and reported by the close, which then writes nothing.
final class WorkbookThread {
  enum Message: Sendable {
    /// Rows of the plan's sheet number `sheet`, one field per column, row after row.
    case rows(sheet: Int, fields: [Field])
    /// Draws the charts and writes the file.
    case close
    /// Ends the thread without writing the file.
    case stop
  }

  /// Messages in flight: a writer that is ahead waits rather than piling rows up in memory.
  static let depth = 16

  private let channel = Channel()
  private var ended = false

  /// Starts the thread and waits until it has created the workbook and its sheets: the Charts
  /// sheet first when there are `charts` to draw from plan sheet number `chartSheet`.
  /// - Parameter charts: each entry a chart and what to draw instead when it has nothing to
  ///   show (`WorkbookChart.firstPlottable`), decided at close from what the sheet holds then.
  init(
    path: String, temporaryDirectory: String, created: Int64, plan: [RunWorkbook.SheetPlan],
    charts: [[WorkbookChart]], chartSheet: Int?, zone: ZoneRules
  ) throws(WorkbookError) {
    let channel = channel
    RunExecutor.shared.startDedicated(name: "workbook") {
      var tables: [SheetRows] = []
      let workbook: Workbook
      do throws(WorkbookError) {
        workbook = try Workbook(path: path, temporaryDirectory: temporaryDirectory, created: created)
        if chartSheet != nil, !charts.isEmpty { try workbook.addChartsSheet() }
        for sheet in plan {
          let added = try workbook.addSheet(
            name: sheet.name, columns: sheet.columns.map(WorkbookTableWriter.workbookColumn))
          tables.append(SheetRows(sheet: added, columns: sheet.columns, zone: zone))
        }
        channel.reply(.ready)
      } catch {
        channel.reply(.failed(error))
        channel.ended.signal()
        return
      }
      var failure: WorkbookError?
      loop: while true {
        switch channel.next() {
        case .rows(let sheet, let fields):
          guard failure == nil else { continue }
          do throws(WorkbookError) { try tables[sheet].append(fields) } catch { failure = error }
        case .close:
          do throws(WorkbookError) {
            if let failure { throw failure }
            if let chartSheet {
              let sheet = tables[chartSheet].sheet
              for choices in charts {
                if let chart = WorkbookChart.firstPlottable(of: choices, in: sheet) {
                  try workbook.addChart(chart, of: sheet)
                }
              }
            }
            channel.reply(.closed(try workbook.close(hidingEmptySheets: true)))
          } catch {
            channel.reply(.failed(error))
          }
          break loop
        case .stop:
          break loop
        }
      }
      channel.ended.signal()
    }
    if case .failed(let error) = channel.answer() {
      ended = true
      channel.ended.wait()
      throw error
    }
  }

  /// Hands a message over; waits only while `depth` messages are in flight.
  func post(_ message: Message) {
    guard !ended else { return }
    channel.send(message)
  }

  /// Asks for the file to be written, without waiting.
  func startClosing() {
    post(.close)
  }

  /// Waits for the file started by `startClosing`; the thread has ended when this returns.
  func closed() throws(WorkbookError) -> WorkbookSummary {
    precondition(!ended, "the workbook was closed or stopped already")
    ended = true
    let answer = channel.answer()
    channel.ended.wait()
    switch answer {
    case .closed(let summary): return summary
    case .failed(let error): throw error
    case .ready: preconditionFailure("the workbook thread answered a close as if it had just started")
    }
  }

  /// A run that fails leaves the workbook unwritten; the thread is waited for either way.
  deinit {
    guard !ended else { return }
    channel.send(.stop)
    channel.ended.wait()
  }

  /// What the thread says back: it is ready, or the file is written, or why not.
  enum Answer: Sendable {
    case ready
    case closed(WorkbookSummary)
    case failed(WorkbookError)
  }

  /// Messages one way (bounded), answers the other.
  private final class Channel: Sendable {
    private let messages = HandOffQueue<Message>(capacity: WorkbookThread.depth)
    /// Two answers at most: ready (or failed), then closed (or failed).
    private let answers = HandOffQueue<Answer>(capacity: 2)
    let ended = DispatchSemaphore(value: 0)

    func send(_ message: Message) { messages.put(message) }

    func next() -> Message { messages.take() }

    func reply(_ answer: Answer) { answers.put(answer) }

    func answer() -> Answer { answers.take() }
  }
}
