/**
 * Times on a chart in India time (IST), 24-hour, whatever the reader's own time zone: the exchanges'
 * clock, which every other time in the console is shown in.
 */
const IST = 'Asia/Kolkata';

const minutes = new Intl.DateTimeFormat('en-GB', {
  timeZone: IST,
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
const seconds = new Intl.DateTimeFormat('en-GB', {
  timeZone: IST,
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

/** "14:05" in IST. */
export const istMinutes = (at: number): string => minutes.format(at);
/** "14:05:09" in IST. */
export const istSeconds = (at: number): string => seconds.format(at);
